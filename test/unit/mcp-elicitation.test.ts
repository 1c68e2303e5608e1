import { describe, expect, it } from "vitest";
import { checkAnswers } from "../../src/tools/ask-user.js";
import { formQuestion } from "../../src/tools/mcp/mcp-elicitation.js";

const form = formQuestion({
  mode: "form",
  message: "Book a room",
  requestedSchema: {
    type: "object",
    properties: {
      room: { type: "string", title: "Room", enum: ["r1", "r2"], enumNames: ["Small", "Large"] },
      floor: {
        type: "string",
        title: "Floor",
        oneOf: [
          { const: "f1", title: "First" },
          { const: "f2", title: "Second" },
        ],
      },
      extras: {
        type: "array",
        title: "Extras",
        minItems: 1,
        maxItems: 2,
        items: { type: "string", enum: ["tea", "coffee", "water"] },
      },
      projector: { type: "boolean", title: "Projector", default: false },
      people: { type: "integer", title: "People", minimum: 1, maximum: 12 },
      email: { type: "string", title: "Email", format: "email" },
      note: { type: "string", title: "Note", maxLength: 5, description: "Anything else" },
      note2: { type: "string", title: "Note", description: "Same title" },
    },
    required: ["room", "people", "email"],
  },
});

const questions = form.question.input.questions;
const byName = (text: string) => questions.find((q) => q.question === text)!;

describe("an MCP form as AskUser questions", () => {
  it("asks one question per field, in order, typed by the field's schema", () => {
    expect(form.question.input.message).toBe("Book a room");
    expect(questions.map((q) => q.question)).toEqual([
      "Room",
      "Floor",
      "Extras",
      "Projector",
      "People",
      "Email",
      "Note (note)",
      "Note (note2)",
    ]);
    expect(byName("Room").options).toEqual([
      { label: "Small", description: "r1" },
      { label: "Large", description: "r2" },
    ]);
    expect(byName("Room").may_skip).toBeUndefined();
    expect(byName("Floor")).toMatchObject({ may_skip: true, multi_select: false });
    expect(byName("Extras")).toMatchObject({ multi_select: true });
    expect(byName("Extras").options.map((o) => o.label)).toEqual(["tea", "coffee", "water"]);
    expect(byName("Projector").options.map((o) => o.label)).toEqual(["Yes", "No"]);
    expect(byName("Projector").context).toBe("Default: false");
    expect(byName("People")).toMatchObject({ options: [], answer_format: "integer" });
    expect(byName("Email")).toMatchObject({ options: [], answer_format: "email" });
    expect(byName("Note (note)").context).toBe("Anything else");
  });

  it("turns checked answers into the form's content", () => {
    const answers = [
      { question: "Room", selected: ["Large"] },
      { question: "Floor", selected: ["Second"] },
      { question: "Extras", selected: ["tea", "water"] },
      { question: "Projector", selected: ["Yes"] },
      { question: "People", selected: [], other: " 4 " },
      { question: "Email", selected: [], other: "a@b.example" },
    ];
    expect(checkAnswers(form.question.input, { answers }).problems).toEqual([]);
    expect(form.question.check!(answers)).toEqual([]);
    expect(form.content(answers)).toEqual({
      room: "r2",
      floor: "f2",
      extras: ["tea", "water"],
      projector: true,
      people: 4,
      email: "a@b.example",
    });
  });

  it("names each answer the form cannot take", () => {
    const answers = [
      { question: "Room", selected: [], other: "Huge" },
      { question: "Extras", selected: ["tea", "coffee", "water"] },
      { question: "People", selected: [], other: "40" },
      { question: "Email", selected: [], other: "nobody" },
      { question: "Note (note)", selected: [], other: "far too long" },
      { question: "Projector", selected: [], other: "perhaps" },
    ];
    expect(form.question.check!(answers)).toEqual([
      { field: "answers[0]", description: "must be one of r1, r2" },
      { field: "answers[5]", description: "choose Yes or No" },
      { field: "answers[1]", description: "extras must NOT have more than 2 items" },
      { field: "answers[2]", description: "people must be <= 12" },
      { field: "answers[3]", description: 'email must match format "email"' },
      { field: "answers[4]", description: "note must NOT have more than 5 characters" },
    ]);
  });

  it("lets optional questions be skipped, and requires the others", () => {
    const problems = checkAnswers(form.question.input, {
      answers: [{ question: "Room", selected: ["Small"] }],
    }).problems;
    expect(problems.map((p) => p.description)).toEqual([
      'question "People" is not answered',
      'question "Email" is not answered',
    ]);
    expect(
      checkAnswers(form.question.input, {
        answers: [{ question: "People", selected: ["3"] }],
      }).problems[0],
    ).toEqual({
      field: "ask_user.answers[0].selected[0]",
      description: "the question has no options: give the answer as other text",
    });
  });
});
