import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig, parseConfig } from "../../src/config/index.js";

describe("config", () => {
  it("defaults to loopback port 50051 and ./data", () => {
    const config = parseConfig({});
    expect(config.listen).toBe("127.0.0.1:50051");
    expect(config.data).toBe("./data");
  });

  it("gives agents a Bash config with nothing passed through by default", () => {
    const config = parseConfig({
      agents: [{ id: "a" }, { id: "b", bash: { env: { CI: "1" }, passEnv: ["GOPATH"] } }],
    });
    expect(config.agents[0]?.bash).toEqual({ env: {}, passEnv: [], maxProcesses: 1024 });
    expect(config.agents[1]?.bash).toEqual({
      env: { CI: "1" },
      passEnv: ["GOPATH"],
      maxProcesses: 1024,
    });
  });

  it.each([
    [{ listen: "127.0.0.1:65536" }, "listen: invalid port 65536"],
    [{ listen: "localhost" }, "listen: expected HOST:PORT"],
    [{ listn: "127.0.0.1:1" }, "listn: unknown key"],
    [{ model: { nmae: "x" } }, "model.nmae: unknown key"],
    [{ logLevel: "loud" }, "logLevel:"],
    [{ agents: [{ id: "a", bash: { passEnv: ["OK", "NOT-OK"] } }] }, "agents[0].bash.passEnv[1]:"],
    [{ agents: [{ id: "a", bash: { env: { "1X": "v" } } }] }, "agents[0].bash.env.1X:"],
    [{ agents: [{ id: "a", bash: { env: { X: 1 } } }] }, "agents[0].bash.env.X:"],
    [{ agents: [{ id: "a", bash: { maxProcesses: 0 } }] }, "agents[0].bash.maxProcesses:"],
    [{ agents: [{ id: "a", bash: { envs: {} } }] }, "agents[0].bash.envs: unknown key"],
    [{ limits: { streamBacklogEvents: 0 } }, "limits.streamBacklogEvents:"],
  ])("rejects %j naming the key", (input, expected) => {
    expect(() => parseConfig(input as never)).toThrow(ConfigError);
    expect(() => parseConfig(input as never)).toThrow(expected);
  });

  it("layers file < environment < flags", async () => {
    const config = await loadConfig(
      { listen: "127.0.0.1:7000" },
      { PARKWAY_LISTEN: "127.0.0.1:6000", PARKWAY_DATA: "/tmp/x", PARKWAY_MODEL: "m1" },
    );
    expect(config.listen).toBe("127.0.0.1:7000");
    expect(config.data).toBe("/tmp/x");
    expect(config.model.name).toBe("m1");
  });

  it("reads OPENAI_API_KEY when PARKWAY_MODEL_API_KEY is unset", async () => {
    const config = await loadConfig({}, { OPENAI_API_KEY: "sk-test" });
    expect(config.model.apiKey).toBe("sk-test");
  });

  it("names a config file that does not exist", async () => {
    await expect(loadConfig({ config: "/nonexistent/parkway.json" }, {})).rejects.toThrow(
      "cannot read config file /nonexistent/parkway.json",
    );
  });
});
