import { describe, it } from "vitest";
import { playScenario } from "../helpers/play-scenario.js";
import { loadScenarios } from "../helpers/scenario.js";

// The shared scenarios on the web port, as a browser drives Parkway: the events over Watch and each
// input over Send, through the Connect protocol (JSON) and gRPC-web: the same events and errors as
// over Chat. The confirm scenario also runs over Connect's binary format. A scenario that crashes
// the server needs it in a process of its own, and is left to the other runners.
describe("scenarios on the web port", () => {
  const scenarios = loadScenarios().filter(({ text }) => !/"crash"\s*:\s*true/.test(text));
  for (const transport of ["connect", "grpc-web"] as const) {
    for (const { file, text } of scenarios) {
      it(`${transport}: ${file.replace(/\.json$/, "")}`, () => playScenario(text, { transport }));
    }
  }
  const confirm = scenarios.find(({ file }) => file === "single-confirm.json")!;
  it("connect-binary: single-confirm", () =>
    playScenario(confirm.text, { transport: "connect-binary" }));
});
