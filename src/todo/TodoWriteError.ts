/**
 * What `todo_write` answers when it rejects a call. These errors are returned to the model as the
 * tool result, so each carries a `message` written for the model to act on in its next call.
 */
import { Schema } from "effect"
import { SessionLogError } from "../log/SessionLogError.ts"

export const ViolationCode = Schema.Literals([
  // shape, from the schema
  "invalid_type",
  "missing_key",
  "excess_property",
  "invalid_status",
  "invalid_value",
  // values, from the write-time rules
  "empty_content",
  "duplicate_content",
  "content_too_long",
  "too_many_items",
  "too_many_in_progress"
])
export type ViolationCode = typeof ViolationCode.Type

export const Violation = Schema.Struct({
  code: ViolationCode,
  /** Where in the arguments, e.g. `["todos", 2, "content"]`. */
  path: Schema.Array(Schema.Union([Schema.String, Schema.Int])),
  message: Schema.String
})
export type Violation = typeof Violation.Type

export const formatPath = (path: ReadonlyArray<string | number>): string =>
  path.length === 0
    ? "arguments"
    : path.map((key, i) => typeof key === "number" ? `[${key}]` : i === 0 ? key : `.${key}`).join("")

/** Every problem with the list, found in one pass so the model can fix them all in one call. */
export class TodoValidationError extends Schema.TaggedError<TodoValidationError>()("TodoValidationError", {
  violations: Schema.NonEmptyArray(Violation),
  message: Schema.String
}) {
  static fromViolations(violations: readonly [Violation, ...Array<Violation>]): TodoValidationError {
    const lines = violations.map((v) => `- ${formatPath(v.path)}: ${v.message} (${v.code})`)
    return new TodoValidationError({
      violations,
      message: `todo_write rejected the list and saved nothing. Fix ${
        violations.length === 1 ? "this problem" : `these ${violations.length} problems`
      } and send the ENTIRE list again:\n${lines.join("\n")}`
    })
  }
}

/** The tool was called outside an agent session: there is no log to write the list to. */
export class NoOwningSessionError extends Schema.TaggedError<NoOwningSessionError>()("NoOwningSessionError", {
  message: Schema.String
}) {
  static readonly instance = new NoOwningSessionError({
    message: "todo_write requires an owning agent session: no AgentSession was provided for this call, so nothing was saved"
  })
}

/** Every way a `todo_write` call can fail; the tool's failure schema. */
export const TodoWriteError = Schema.Union([TodoValidationError, NoOwningSessionError, SessionLogError])
export type TodoWriteError = typeof TodoWriteError.Type
