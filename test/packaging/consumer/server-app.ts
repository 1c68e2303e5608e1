// An application that embeds Parkway, compiled by the packaging test under @tsconfig/strictest.
import {
  type Config,
  defineTool,
  ParkwayError,
  parseConfig,
  type RunningParkway,
  startParkway,
  StoreDamagedError,
  type ToolResult,
} from "parkway";
import { createParkwayClient, FinishedReason, type ServerEvent } from "parkway/client";
import { z } from "zod";

const weather = defineTool({
  name: "Weather",
  description: "Current weather in a city.",
  input: z.strictObject({ city: z.string(), unit: z.enum(["C", "F"]).optional() }),
  readOnly: true,
  run: async ({ city, unit }): Promise<ToolResult> => ({
    state: "success",
    output: `sunny in ${city}, 21°${unit ?? "C"}`,
  }),
});

export async function start(data: string): Promise<RunningParkway> {
  const config: Config = parseConfig({ listen: "127.0.0.1:0", data });
  try {
    return await startParkway({ config, tools: [weather] });
  } catch (error) {
    if (error instanceof StoreDamagedError) throw new Error(`damaged: ${error.message}`);
    if (error instanceof ParkwayError) throw new Error(`${error.code}: ${error.message}`);
    throw error;
  }
}

export async function firstAgent(parkway: RunningParkway): Promise<string | undefined> {
  const client = createParkwayClient(parkway.address);
  try {
    const agents = await client.listAgents();
    return agents[0]?.id;
  } finally {
    client.close();
  }
}

export function finished(event: ServerEvent): string | undefined {
  const e = event.event;
  return e?.$case === "replyEnd" ? FinishedReason[e.value.finishedReason] : undefined;
}
