/**
 * The paths an answer's field violations name, from the request's root in proto field names. Chat's
 * ClientEvent, ReplyRequest and SendRequest spell their input fields alike, so one path fits
 * whichever carried the answer: `user_confirm_result.confirm_results[0].tool_call.input`, as a
 * value the request could not decode names `user_confirm_result.confirm_results[0].rules[0]…`.
 */

/** The list of a UserConfirmResult's answers. */
export const CONFIRM_RESULTS = "user_confirm_result.confirm_results";

/** The list of an ExternalExecutionResult's results. */
export const EXECUTION_RESULTS = "external_execution_result.execution_results";

/** The `i`th confirmation answer. */
export const confirmResultField = (i: number): string => `${CONFIRM_RESULTS}[${i}]`;

/** The `i`th external execution result. */
export const executionResultField = (i: number): string => `${EXECUTION_RESULTS}[${i}]`;
