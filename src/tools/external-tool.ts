import { createRequire } from "node:module";
import type { Ajv, ErrorObject } from "ajv";
import type { RE2JS } from "re2js";
import { z } from "zod";
import type { ExternalResult, ResultProblem, Tool } from "./tool.js";

let compiler: Ajv | undefined;

/**
 * The JSON Schema compiler, loaded when a session first declares a tool (it costs start-up time
 * that servers whose clients declare none need not pay). No format is known (no ajv-formats):
 * formats are not checked, and not warned about either. A schema's `pattern`s run on RE2 (re2js),
 * in time linear in the value: a client's `^(a+)+$` on JavaScript's backtracking engine would
 * hold the server's event loop for minutes on a long value. A pattern RE2 does not take
 * (lookarounds, backreferences) makes the schema refused.
 */
function ajv(): Ajv {
  if (!compiler) {
    const load = createRequire(import.meta.url);
    const { Ajv: Compiler } = load("ajv") as { Ajv: typeof Ajv };
    const { RE2JS: Re2 } = load("re2js") as { RE2JS: typeof RE2JS };
    const regExp = Object.assign(
      (pattern: string) => {
        const compiled = Re2.compile(pattern);
        return { test: (text: string) => compiled.matcher(text).find() };
      },
      { code: "re2js" },
    );
    compiler = new Compiler({
      allErrors: true,
      strict: false,
      validateFormats: false,
      code: { regExp },
    });
  }
  return compiler;
}

/** How a client declares a tool it executes itself. */
export interface ExternalToolSpec {
  name: string;
  description: string;
  /** JSON Schema of the input object. */
  inputSchema: Record<string, unknown>;
  /** JSON Schema that a successful result's metadata must satisfy. */
  metadataSchema?: Record<string, unknown>;
}

function problemsOf(errors: ErrorObject[] | null | undefined, prefix: string): ResultProblem[] {
  return (errors ?? []).map((e) => {
    const path = e.instancePath
      .split("/")
      .filter(Boolean)
      .map((p) => (/^\d+$/.test(p) ? `[${p}]` : `.${p}`))
      .join("");
    const missing =
      e.keyword === "required"
        ? `.${(e.params as { missingProperty: string }).missingProperty}`
        : "";
    return { field: `${prefix}${path}${missing}`, description: e.message ?? "is invalid" };
  });
}

/** Why a JSON Schema cannot be used, or undefined when it compiles. */
export function schemaError(schema: Record<string, unknown>): string | undefined {
  try {
    ajv().compile(schema);
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

/**
 * A zod schema for a tool input object that checks it against a JSON Schema (ajv; throws when the
 * schema does not compile): each problem becomes an issue naming its field.
 */
export function jsonSchemaInput(
  schema: Record<string, unknown>,
): z.ZodType<Record<string, unknown>> {
  const validate = ajv().compile(schema);
  return z.record(z.string(), z.unknown()).superRefine((value, ctx) => {
    if (validate(value)) return;
    for (const problem of problemsOf(validate.errors, "")) {
      ctx.addIssue({
        code: "custom",
        message: `${problem.field || "(input)"} ${problem.description}`,
      });
    }
  });
}

/**
 * A tool executed by the client: its input is validated against the declared JSON Schema (the
 * model gets an error result naming each problem), and a successful result's metadata against the
 * metadata schema (the client's result is refused, and the reply stays parked).
 */
export function externalTool(spec: ExternalToolSpec): Tool<Record<string, unknown>> {
  const validateMetadata = spec.metadataSchema ? ajv().compile(spec.metadataSchema) : undefined;
  const inputSchema = jsonSchemaInput(spec.inputSchema);
  return {
    name: spec.name,
    description: spec.description,
    inputSchema,
    jsonSchema: spec.inputSchema,
    external: true,
    isReadOnly: () => false,
    isConcurrencySafe: () => true,
    checkExternalResult(_input, result: ExternalResult) {
      if (!validateMetadata || result.state !== "success") return { problems: [], result };
      const ok = validateMetadata(result.metadata ?? {});
      return { problems: ok ? [] : problemsOf(validateMetadata.errors, "metadata"), result };
    },
    run() {
      return Promise.reject(new Error(`${spec.name} is executed by the client`));
    },
  };
}
