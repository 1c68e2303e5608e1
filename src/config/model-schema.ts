import { z } from "zod";
import { duration } from "./duration.js";

/** The model every agent without its own model uses. */
export const modelConfigSchema = z.strictObject({
  /** Base URL of an OpenAI-compatible endpoint, e.g. http://127.0.0.1:8080/v1; unset = the demo model. */
  url: z
    .url({
      protocol: /^https?$/,
      error: "expected an http or https URL such as http://127.0.0.1:8080/v1",
    })
    .optional(),
  /** Model name sent to the endpoint. */
  name: z.string().min(1).optional(),
  /** API key sent to the endpoint. */
  apiKey: z.string().optional(),
  /** Retries on connection errors, 429 and 5xx. */
  maxRetries: z.coerce.number().int().min(0).max(10).default(2),
  /** How long to wait for a response to start (per attempt), then between two streamed chunks. */
  timeout: duration().default(600_000),
});
