/**
 * What `todo_write` answers when it rejects a call. These errors are returned to the model as the
 * tool result, so each carries a `message` written for the model to act on in its next call, and a
 * `code` a program can branch on without reading tags.
 *
 * @since 0.2.0
 */
import * as Schema from "effect/Schema"
import { SessionLogError } from "../log/SessionLogError.ts"

/**
 * Why one part of the arguments was rejected.
 *
 * @since 0.2.0
 * @category violations
 */
export const ViolationCode = Schema.Literals([
  // shape, from the schema
  "invalid_type",
  "missing_key",
  "excess_property",
  "invalid_status",
  "invalid_value",
  // size, checked before anything else is read
  "arguments_too_large",
  // values, from the write-time rules
  "empty_content",
  "duplicate_content",
  "content_too_long",
  "control_character",
  "invalid_unicode",
  "too_many_items",
  "too_many_in_progress",
  "empty_evidence",
  "evidence_too_long",
  "evidence_not_completed",
  "missing_evidence"
])
/**
 * @since 0.2.0
 * @category violations
 */
export type ViolationCode = typeof ViolationCode.Type

/**
 * One problem with the arguments: what, where, and what to do about it.
 *
 * @since 0.2.0
 * @category violations
 */
export const Violation = Schema.Struct({
  code: ViolationCode,
  /** Where in the arguments, e.g. `["todos", 2, "content"]`. */
  path: Schema.Array(Schema.Union([Schema.String, Schema.Int])),
  message: Schema.String
})
/**
 * @since 0.2.0
 * @category violations
 */
export type Violation = typeof Violation.Type

const identifier = /^[A-Za-z_$][\w$]{0,63}$/

/**
 * A path as the model reads it: `todos[2].content`; a key that isn't a plain identifier is quoted
 * (and shortened), so a hostile key can't spoof the reply.
 *
 * @since 0.2.0
 * @category violations
 */
export const formatPath = (path: ReadonlyArray<string | number>): string =>
  path.length === 0
    ? "arguments"
    : path.map((key, i) =>
      typeof key === "number"
        ? `[${key}]`
        : identifier.test(key)
        ? (i === 0 ? key : `.${key}`)
        : `[${JSON.stringify(key.length > 40 ? `${key.slice(0, 39)}…` : key).replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)}]`
    ).join("")

/**
 * How many violations a message lists before it says how many more there are.
 *
 * @since 0.2.0
 * @category violations
 */
export const maxListed = 20

/**
 * Every problem with the list, found in one pass so the model can fix them all in one call. The
 * `violations` are all there for the program; the `message` lists the first `maxListed`.
 *
 * @since 0.2.0
 * @category errors
 */
export class TodoValidationError extends Schema.TaggedError<TodoValidationError>()("TodoValidationError", {
  violations: Schema.NonEmptyArray(Violation),
  message: Schema.String
}) {
  static fromViolations(violations: readonly [Violation, ...Array<Violation>]): TodoValidationError {
    const lines = violations.slice(0, maxListed).map((v) => `- ${formatPath(v.path)}: ${v.message} (${v.code})`)
    if (violations.length > maxListed) lines.push(`… and ${violations.length - maxListed} more`)
    return new TodoValidationError({
      violations,
      message: `todo_write rejected the list and saved nothing. Fix ${
        violations.length === 1 ? "this problem" : `these ${violations.length} problems`
      } and send the ENTIRE list again:\n${lines.join("\n")}`
    })
  }

  /** The rejection's code: `invalid_arguments` (each violation has its own code besides). */
  get code(): "invalid_arguments" {
    return "invalid_arguments"
  }
}

/**
 * The tool was called outside an agent session: there is no log to write the list to.
 *
 * @since 0.2.0
 * @category errors
 */
export class NoOwningSessionError extends Schema.TaggedError<NoOwningSessionError>()("NoOwningSessionError", {
  message: Schema.String
}) {
  static readonly instance = new NoOwningSessionError({
    message: "todo_write requires an owning agent session: no AgentSession was provided for this call, so nothing was saved"
  })

  /** The rejection's code. */
  get code(): "no_owning_session" {
    return "no_owning_session"
  }
}

/**
 * Every way a `todo_write` call can fail; the tool's failure schema.
 *
 * @since 0.2.0
 * @category errors
 */
export const TodoWriteError = Schema.Union([TodoValidationError, NoOwningSessionError, SessionLogError])
/**
 * @since 0.2.0
 * @category errors
 */
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
      if (reason.maybeStored === true) {
        return "todo_write could not confirm that the list was saved (storage failed): it may or may not have been. Tell the user; retrying will not help until the session log is reopened."
      }
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

/**
 * Why a call was rejected, as a code: the arguments were invalid (see the violations' own codes),
 * no agent session owns the call, another process holds the session, the log's own invariants
 * refused the list, or the storage failed (retrying may help).
 *
 * @since 0.2.0
 * @category codes
 */
export const RejectionCode = Schema.Literals([
  "invalid_arguments",
  "no_owning_session",
  "session_locked",
  "rejected_by_log",
  "storage_failed"
])
/**
 * @since 0.2.0
 * @category codes
 */
export type RejectionCode = typeof RejectionCode.Type

/**
 * The code of any rejection, so a program can branch on it without reading tags or reasons.
 *
 * @since 0.2.0
 * @category codes
 */
export const code = (error: TodoWriteError): RejectionCode => {
  if (error._tag !== "SessionLogError") return error.code
  const reason = error.reason._tag
  if (reason === "Locked" || reason === "OwnershipLost") return "session_locked"
  if (reason === "InvariantViolation" || reason === "InvalidPayload") return "rejected_by_log"
  // every other reason (I/O, a damaged log, …) is the storage's failure
  return "storage_failed"
}
