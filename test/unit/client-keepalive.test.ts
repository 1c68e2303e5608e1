import { describe, expect, it } from "vitest";
import { createParkwayClient, DEFAULT_CLIENT_KEEPALIVE } from "../../src/client/index.js";
import { keepaliveChannelOptions } from "../../src/client/keepalive.js";

describe("client keepalive", () => {
  it("pings every 30 s with a 20 s timeout while a call is open, by default", () => {
    expect(DEFAULT_CLIENT_KEEPALIVE).toEqual({ timeMs: 30_000, timeoutMs: 20_000 });
    expect(keepaliveChannelOptions(undefined)).toEqual({
      "grpc.keepalive_time_ms": 30_000,
      "grpc.keepalive_timeout_ms": 20_000,
      "grpc.keepalive_permit_without_calls": 0,
    });
  });

  it("takes values over the defaults, and false turns the pings off", () => {
    expect(keepaliveChannelOptions({ timeMs: 10_000 })).toMatchObject({
      "grpc.keepalive_time_ms": 10_000,
      "grpc.keepalive_timeout_ms": 20_000,
    });
    expect(keepaliveChannelOptions(false)).toEqual({});
  });

  it.each([
    [{ timeMs: 0 }, "ClientOptions.keepalive.timeMs"],
    [{ timeMs: 1.5 }, "ClientOptions.keepalive.timeMs"],
    [{ timeoutMs: Number.NaN }, "ClientOptions.keepalive.timeoutMs"],
  ])("refuses %j naming the option", (keepalive, field) => {
    expect(() => createParkwayClient("127.0.0.1:1", { keepalive })).toThrow(TypeError);
    expect(() => createParkwayClient("127.0.0.1:1", { keepalive })).toThrow(field);
  });
});
