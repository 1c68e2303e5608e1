import { describe, it } from "vitest";
import { playScenario } from "../helpers/play-scenario.js";
import { loadScenarios } from "../helpers/scenario.js";

describe("scenarios", () => {
  for (const { file, text } of loadScenarios()) {
    it(file.replace(/\.json$/, ""), () => playScenario(text));
  }
});
