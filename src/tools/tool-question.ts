/** One problem with a client's input, named by its path relative to the result. */
export interface ResultProblem {
  field: string;
  description: string;
}

/** One option of a question. */
export interface QuestionOption {
  label: string;
  description: string;
  preview?: string;
}

/**
 * One question as AskUser asks it. The model's own have two to four options and must all be
 * answered; a form's (an MCP server's elicitation) may have any number of options, none for a field
 * answered with typed text (`other`, in `answer_format`), and may be skipped when optional.
 */
export interface Question {
  question: string;
  header: string;
  context?: string;
  options: QuestionOption[];
  multi_select: boolean;
  may_skip?: boolean;
  answer_format?: string;
}

/** What AskUser asks: its questions, and what the asker says above them. */
export interface QuestionInput {
  questions: Question[];
  message?: string;
}

/** One answer as carried in a result's metadata. */
export interface AskUserAnswer {
  question: string;
  selected: string[];
  other?: string;
}

/** A question a running tool asks the person: the reply parks on it as on an AskUser. */
export interface ToolQuestion {
  input: QuestionInput;
  /**
   * Problems of answers beyond AskUser's own checks, each naming its field relative to the
   * answers (`answers[2].other`); the answer is refused while there are any.
   */
  check?: (answers: AskUserAnswer[]) => ResultProblem[];
}

/** How the person answered a tool's question: with answers, declined, or not at all. */
export type ToolAnswer =
  { state: "success"; answers: AskUserAnswer[] } | { state: "denied" | "error" | "interrupted" };
