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

/**
 * What the model reads for a failed call. Validation and missing-session errors are written for the
 * model already; a session log failure becomes one short line saying what to do next, without its
 * detail (file paths, driver text), which stays on the typed error for operators and their logs.
 *
 * @since 0.2.0
 * @category model text
 */
export const modelText = (error: TodoWriteError): string => {
  if (error._tag !== "SessionLogError") return error.message
  const reason = error.reason
  switch (reason._tag) {
    case "Locked":
      return "todo_write could not save the list: another process holds this session, so nothing was saved. Tell the user; retrying helps only once that process has stopped."
    case "OwnershipLost":
      return "todo_write could not save the list: this session's log was taken over or removed outside this process, so nothing was saved. Tell the user; retrying will not help."
    case "StorageFailure":
      switch (reason.kind) {
        case "DiskFull":
        case "QuotaExceeded":
          return "todo_write could not save the list: the disk is full, so nothing was saved. Tell the user; retrying will not help until space is freed."
        case "ReadOnly":
        case "PermissionDenied":
          return "todo_write could not save the list: the session log can't be written (read-only or no permission), so nothing was saved. Tell the user; retrying will not help."
        default:
          return "todo_write could not save the list (storage failed), so nothing was saved. Retry once with the ENTIRE list; if it fails again, tell the user."
      }
    case "InvariantViolation":
      return `todo_write could not save the list: the session log's rule "${reason.rule}" refused it (${reason.detail}), so nothing was saved. Fix the list and send the ENTIRE list again.`
    default:
      return "todo_write could not save the list: the session log is unusable (damaged or misconfigured), so nothing was saved. Tell the user; retrying will not help."
  }
}
