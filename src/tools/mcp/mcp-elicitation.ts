import type {
  ElicitRequestFormParams,
  PrimitiveSchemaDefinition,
} from "@modelcontextprotocol/sdk/types.js";
import { Ajv, type ErrorObject } from "ajv";
import addFormatsModule from "ajv-formats";
import type { ResultProblem } from "../tool.js";
import type { AskUserAnswer, Question, ToolQuestion } from "../tool-question.js";

// ajv-formats is CommonJS: its plugin is the module itself.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
const ajv = addFormats(new Ajv({ allErrors: true, strict: false }));

const YES = "Yes";
const NO = "No";

/** One field of a form with the question that asks it and how an answer becomes its value. */
interface Field {
  name: string;
  question: Question;
  /** Option label → value, for a choice. */
  values?: Map<string, string>;
  kind: "boolean" | "choice" | "choices" | "text" | "number" | "integer";
}

/** A form an MCP server asked for, as questions, and the content an answer makes. */
export interface FormQuestion {
  question: ToolQuestion;
  /** The form's content for answers that passed `question.check`. */
  content(answers: readonly AskUserAnswer[]): Record<string, string | number | boolean | string[]>;
}

const cut = (text: string, max: number) =>
  [...text].length <= max ? text : [...text].slice(0, max).join("");

function choices(
  schema: PrimitiveSchemaDefinition,
): { label: string; value: string }[] | undefined {
  const s = schema as {
    enum?: string[];
    enumNames?: string[];
    oneOf?: { const: string; title: string }[];
    items?: { enum?: string[]; anyOf?: { const: string; title: string }[] };
  };
  const titled = s.oneOf ?? s.items?.anyOf;
  if (titled) return titled.map((o) => ({ label: o.title, value: o.const }));
  const values = s.enum ?? s.items?.enum;
  return values?.map((value, i) => ({ label: s.enumNames?.[i] ?? value, value }));
}

function fieldOf(name: string, schema: PrimitiveSchemaDefinition, required: boolean): Field {
  const title = schema.title ?? name;
  const hasDefault = "default" in schema && schema.default !== undefined;
  const context = [
    schema.description,
    hasDefault ? `Default: ${JSON.stringify(schema.default)}` : undefined,
  ]
    .filter((t): t is string => t !== undefined && t !== "")
    .join("\n");
  const base = {
    question: title,
    header: cut(title, 12),
    ...(context ? { context } : {}),
    ...(required ? {} : { may_skip: true }),
  };
  const listed = choices(schema);
  if (listed) {
    const unique = listed.map((c, i) =>
      listed.findIndex((d) => d.label === c.label) === i
        ? c
        : { ...c, label: `${c.label} (${c.value})` },
    );
    return {
      name,
      kind: schema.type === "array" ? "choices" : "choice",
      values: new Map(unique.map((c) => [c.label, c.value])),
      question: {
        ...base,
        options: unique.map((c) => ({
          label: c.label,
          description: c.label === c.value ? "" : c.value,
        })),
        multi_select: schema.type === "array",
      },
    };
  }
  if (schema.type === "boolean") {
    const options = [YES, NO].map((label) => ({ label, description: "" }));
    return { name, kind: "boolean", question: { ...base, options, multi_select: false } };
  }
  const kind = schema.type === "number" || schema.type === "integer" ? schema.type : "text";
  const format = kind === "text" ? ((schema as { format?: string }).format ?? "text") : kind;
  return {
    name,
    kind,
    question: { ...base, options: [], multi_select: false, answer_format: format },
  };
}

/** The value an answer gives a field, or the problem with it. */
function valueOf(field: Field, answer: AskUserAnswer): { value: unknown } | { problem: string } {
  const [first] = answer.selected;
  const text = answer.other?.trim();
  switch (field.kind) {
    case "boolean":
      if (first === YES || /^(yes|true)$/i.test(text ?? "")) return { value: true };
      if (first === NO || /^(no|false)$/i.test(text ?? "")) return { value: false };
      return { problem: `choose ${YES} or ${NO}` };
    case "choice":
    case "choices": {
      const picked = [...answer.selected, ...(text ? [text] : [])];
      const values = [...(field.values?.values() ?? [])];
      const out: string[] = [];
      for (const label of picked) {
        const value = field.values?.get(label) ?? (values.includes(label) ? label : undefined);
        if (value === undefined) return { problem: `must be one of ${values.join(", ")}` };
        out.push(value);
      }
      return { value: field.kind === "choice" ? out[0] : out };
    }
    case "number":
    case "integer": {
      const raw = (text ?? first ?? "").trim();
      const n = Number(raw);
      if (raw === "" || !Number.isFinite(n)) {
        return { problem: `must be a ${field.kind === "integer" ? "whole number" : "number"}` };
      }
      return { value: n };
    }
    case "text":
      return { value: answer.other ?? first ?? "" };
  }
}

/**
 * An MCP server's form (elicitation, form mode) as questions asked like AskUser's, one per field
 * in the form's order: a choice (`enum`, titled `oneOf`, or an array of either: several may be
 * chosen) lists its values as options, a boolean is Yes or No, a text or number field has no
 * options and is answered with typed text. Optional fields may be skipped. The check converts each
 * answer and validates the content against the form's schema (formats, lengths, ranges, counts),
 * naming the answer at fault.
 */
export function formQuestion(params: ElicitRequestFormParams): FormQuestion {
  const schema = params.requestedSchema;
  const required = new Set(schema.required ?? []);
  const fields = Object.entries(schema.properties).map(([name, s]) =>
    fieldOf(name, s, required.has(name)),
  );
  // Question texts are unique: a repeated title is told apart by its field's name.
  const counts = new Map<string, number>();
  for (const f of fields)
    counts.set(f.question.question, (counts.get(f.question.question) ?? 0) + 1);
  for (const field of fields) {
    if ((counts.get(field.question.question) ?? 0) > 1) {
      field.question.question = `${field.question.question} (${field.name})`;
    }
  }
  const validate = ajv.compile(schema);
  const convert = (answers: readonly AskUserAnswer[]) => {
    const content: Record<string, unknown> = {};
    const problems: ResultProblem[] = [];
    const indexOf = new Map<string, number>();
    const failed = new Set<string>();
    answers.forEach((answer, i) => {
      const field = fields.find((f) => f.question.question === answer.question);
      if (!field) return;
      indexOf.set(field.name, i);
      const got = valueOf(field, answer);
      if ("problem" in got) {
        problems.push({ field: `answers[${i}]`, description: got.problem });
        failed.add(field.name);
      } else content[field.name] = got.value;
    });
    if (!validate(content)) {
      for (const error of validate.errors ?? []) {
        const name = fieldName(error);
        if (!failed.has(name)) problems.push(problemOf(error, name, indexOf));
      }
    }
    return { content, problems };
  };
  return {
    question: {
      input: { questions: fields.map((f) => f.question), message: params.message },
      check: (answers) => convert(answers).problems,
    },
    content: (answers) =>
      convert(answers).content as Record<string, string | number | boolean | string[]>,
  };
}

/** The field an error is about: the property at fault, or the one found missing. */
function fieldName(error: ErrorObject): string {
  const missing = (error.params as { missingProperty?: string }).missingProperty;
  return error.instancePath.split("/")[1] ?? missing ?? "";
}

function problemOf(
  error: ErrorObject,
  name: string,
  indexOf: ReadonlyMap<string, number>,
): ResultProblem {
  const index = indexOf.get(name);
  const at = error.instancePath === "" ? "" : `${name} `;
  return {
    field: index === undefined ? "answers" : `answers[${index}]`,
    description: `${at}${error.message ?? "is not valid"}`,
  };
}
