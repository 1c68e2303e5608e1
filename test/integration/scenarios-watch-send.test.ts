import { describe, it } from "vitest";
import { playScenario } from "../helpers/play-scenario.js";
import { loadScenarios } from "../helpers/scenario.js";

// The shared scenarios again, each input over Send and the events over Watch: the same events and
// errors as over Chat.
describe("scenarios over Watch + Send", () => {
  for (const { file, text } of loadScenarios()) {
    it(file.replace(/\.json$/, ""), () => playScenario(text, { transport: "watch-send" }));
  }
});
