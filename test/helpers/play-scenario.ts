import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { startHarness } from "./parkway-harness.js";
import { startProcessHarness } from "./process-harness.js";
import { instantiate } from "./scenario.js";
import { type RunOptions, type ScenarioHost, ScenarioRunner } from "./scenario-runner.js";

/**
 * Plays the shared scenario in `text` (a file of test/scenarios) against a fresh server: in this
 * process, or in a process of its own when a step crashes it.
 */
export async function playScenario(text: string, options: RunOptions = {}): Promise<void> {
  // The scenario's files are in the agent's directory, which its sessions share.
  const agent = (workdir: string) => ({
    shareWorkingDirectories: true,
    ...(instantiate(text, workdir).agent ?? {}),
  });
  const crashes = instantiate(text, "").steps.some((step) => step.crash);
  const web =
    options.transport !== undefined && !["chat", "watch-send"].includes(options.transport);
  if (web && crashes) throw new Error("the web transports run Parkway in this process: no crash");
  const h = crashes
    ? await startProcessHarness(agent)
    : await startHarness({ turns: [] }, agent, web ? { web: { listen: "127.0.0.1:0" } } : {});
  try {
    const scenario = instantiate(text, h.workdir);
    await mkdir(h.workdir, { recursive: true });
    for (const [name, content] of Object.entries(scenario.files ?? {})) {
      await writeFile(path.join(h.workdir, name), content);
    }
    await h.model.reset(scenario.script as never);
    const host: ScenarioHost = {
      clients: [h.client],
      model: h.model,
      workdir: h.workdir,
      restart: () => h.restart(),
      ...("parkway" in h && h.parkway.webUrl ? { webUrls: [h.parkway.webUrl] } : {}),
      ...("crash" in h ? { crash: () => h.crash() } : {}),
    };
    await new ScenarioRunner(host, scenario, options).run();
  } finally {
    await h.close();
  }
}
