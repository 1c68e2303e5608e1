import { startScriptedModel } from "../src/model/scripted/index.js";
import { benchScript } from "./lib/model.js";
import { createOpenAIModel } from "../src/model/openai-model.js";
const model = await startScriptedModel({ script: benchScript(2000) });
const m = createOpenAIModel({ baseURL: model.url, model: "x", maxRetries: 0 });
for (let round = 0; round < 10; round++) {
  const res = await Promise.allSettled(Array.from({ length: 64 }, async () => {
    let n = 0;
    for await (const e of m.stream({ messages: [{ role: "user", content: "stream" }], tools: [], signal: new AbortController().signal })) if (e.type === "text_delta") n++;
    return n;
  }));
  const bad = res.filter((r) => r.status === "rejected");
  console.log("round", round, "ok", res.length - bad.length, "failed", bad.length);
  for (const b of bad.slice(0, 2)) { const e = (b as PromiseRejectedResult).reason; console.log(e.message, e.cause?.cause, e.cause?.cause?.code); }
}
await model.close();
process.exit(0);
