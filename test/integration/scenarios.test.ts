import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, it } from "vitest";
import { startHarness } from "../helpers/parkway-harness.js";
import { startProcessHarness } from "../helpers/process-harness.js";
import { instantiate, loadScenarios } from "../helpers/scenario.js";
import { type ScenarioHost, ScenarioRunner } from "../helpers/scenario-runner.js";

describe("scenarios", () => {
  for (const { file, text } of loadScenarios()) {
    it(file.replace(/\.json$/, ""), async () => {
      // The scenario's files are in the agent's directory, which its sessions share.
      const agent = (workdir: string) => ({
        shareWorkingDirectories: true,
        ...(instantiate(text, workdir).agent ?? {}),
      });
      // Parkway runs in this process, or in its own when a step crashes it.
      const crashes = instantiate(text, "").steps.some((step) => step.crash);
      const h = crashes
        ? await startProcessHarness(agent)
        : await startHarness({ turns: [] }, agent);
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
          ...("crash" in h ? { crash: () => h.crash() } : {}),
        };
        await new ScenarioRunner(host, scenario).run();
      } finally {
        await h.close();
      }
    });
  }
});
