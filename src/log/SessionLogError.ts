/**
 * Why a session log operation failed. One error, with a `reason` saying which of the ways it can
 * fail, the `session` it concerns (absent for log-wide operations such as listing sessions or
 * building a layer) and, where a foreign failure caused it, that failure as `cause`.
 *
 * @since 0.2.0
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

/**
 * A registered invariant rejected an event: on append (nothing was written) or on load.
 *
 * @since 0.2.0
 * @category reasons
 */
export class InvariantViolation extends Schema.TaggedClass<InvariantViolation>()("InvariantViolation", {
  rule: Schema.String,
  seq: Schema.optionalKey(Schema.Int),
  detail: Schema.String
}) {}

/**
 * The payload can't be stored as JSON (a cycle, a BigInt, a function…).
 *
 * @since 0.2.0
 * @category reasons
 */
export class InvalidPayload extends Schema.TaggedClass<InvalidPayload>()("InvalidPayload", {
  detail: Schema.String
}) {}

/**
 * Stored data is damaged or inconsistent: bad JSON, a seq gap, a header that doesn't match.
 *
 * @since 0.2.0
 * @category reasons
 */
export class Corrupt extends Schema.TaggedClass<Corrupt>()("Corrupt", {
  line: Schema.optionalKey(Schema.Int),
  seq: Schema.optionalKey(Schema.Int),
  detail: Schema.String
}) {}

/**
 * Another process holds the session open for appending.
 *
 * @since 0.2.0
 * @category reasons
 */
export class Locked extends Schema.TaggedClass<Locked>()("Locked", {
  detail: Schema.String
}) {}

/**
 * What kind of storage failure it was, for a caller that answers in one short line (a model, an
 * exit code): the disk is full, the file system is read-only, permission is denied, a disk quota
 * is exceeded, the device failed (I/O error), or something else (`Unknown`: read `detail`).
 *
 * @since 0.2.0
 * @category reasons
 */
export const StorageFailureKind = Schema.Literals(["DiskFull", "ReadOnly", "PermissionDenied", "QuotaExceeded", "IoError", "Unknown"])

/**
 * @since 0.2.0
 * @category reasons
 */
export type StorageFailureKind = typeof StorageFailureKind.Type

/**
 * The storage itself failed (I/O, connection). `detail` says what happened in plain words and, for
 * a system error, its code (`ENOSPC`…); the foreign error is the `SessionLogError`'s `cause`.
 * `maybeStored`: the failed append could not be undone, so it may still appear in the log.
 *
 * @since 0.2.0
 * @category reasons
 */
export class StorageFailure extends Schema.TaggedClass<StorageFailure>()("StorageFailure", {
  kind: StorageFailureKind.pipe(Schema.withConstructorDefault(Effect.succeed("Unknown"))),
  detail: Schema.String,
  maybeStored: Schema.optionalKey(Schema.Literal(true))
}) {}

/**
 * A path the log would use is not a regular file it may open: a symbolic link (never followed, so
 * nothing outside the directory is written), a FIFO, a device, a directory. Nothing was opened.
 *
 * @since 0.2.0
 * @category reasons
 */
export class UnsafePath extends Schema.TaggedClass<UnsafePath>()("UnsafePath", {
  path: Schema.String,
  detail: Schema.String
}) {}

/**
 * Something outside the log changed a file a writer holds: its lock file was removed or replaced
 * (so another writer may have taken the session), or the session file was deleted, replaced or
 * appended to. The writer stops: this append and every later one through it fail, unacknowledged.
 *
 * @since 0.2.0
 * @category reasons
 */
export class OwnershipLost extends Schema.TaggedClass<OwnershipLost>()("OwnershipLost", {
  path: Schema.String,
  detail: Schema.String
}) {}

/**
 * A layer was given options it can't work with (a table name that isn't an identifier, a page size
 * of zero…): nothing was opened.
 *
 * @since 0.2.0
 * @category reasons
 */
export class InvalidOptions extends Schema.TaggedClass<InvalidOptions>()("InvalidOptions", {
  detail: Schema.String
}) {}

/**
 * A session id that isn't one (`SessionId`'s character set and length), from a caller that got
 * around the type: refused before any I/O, since ids become file names and keys.
 *
 * @since 0.2.0
 * @category reasons
 */
export class InvalidSessionId extends Schema.TaggedClass<InvalidSessionId>()("InvalidSessionId", {
  detail: Schema.String
}) {}

/**
 * Every way a session log operation can fail.
 *
 * @since 0.2.0
 * @category reasons
 */
export const Reason = Schema.Union([
  InvariantViolation,
  InvalidPayload,
  Corrupt,
  Locked,
  StorageFailure,
  InvalidOptions,
  UnsafePath,
  OwnershipLost,
  InvalidSessionId
])

/**
 * @since 0.2.0
 * @category reasons
 */
export type Reason = typeof Reason.Type

const where = (reason: Reason): string => {
  const parts: Array<string> = []
  if ("line" in reason && reason.line !== undefined) parts.push(`line ${reason.line}`)
  if ("seq" in reason && reason.seq !== undefined) parts.push(`seq ${reason.seq}`)
  return parts.length === 0 ? "" : ` at ${parts.join(", ")}`
}

const describe = (reason: Reason): string => {
  switch (reason._tag) {
    case "InvariantViolation":
      return `invariant "${reason.rule}" violated${where(reason)}: ${reason.detail}`
    case "Corrupt":
      return `corrupt log${where(reason)}: ${reason.detail}`
    case "InvalidPayload":
      return `payload can't be stored: ${reason.detail}`
    case "Locked":
      return `session is locked: ${reason.detail}`
    case "StorageFailure":
      return `storage failed: ${reason.detail}`
    case "InvalidOptions":
      return `invalid options: ${reason.detail}`
    case "UnsafePath":
      return `unsafe path ${reason.path}: ${reason.detail}`
    case "OwnershipLost":
      return `this writer no longer owns the session: ${reason.path} ${reason.detail}`
    case "InvalidSessionId":
      return `invalid session id: ${reason.detail}`
  }
}

/**
 * The one error of every `SessionLog` operation.
 *
 * @since 0.2.0
 * @category errors
 */
export class SessionLogError extends Schema.TaggedError<SessionLogError>()("SessionLogError", {
  method: Schema.String,
  session: Schema.optionalKey(Schema.String),
  reason: Reason,
  message: Schema.String,
  cause: Schema.optionalKey(Schema.Defect())
}) {
  /** Builds the error with a message that says which operation, which session and what happened. */
  static fromReason(options: {
    readonly method: string
    readonly session?: string | undefined
    readonly reason: Reason
    readonly cause?: unknown
  }): SessionLogError {
    const target = options.session === undefined ? "" : options.session
    return new SessionLogError({
      method: options.method,
      ...(options.session === undefined ? {} : { session: options.session }),
      reason: options.reason,
      ...(options.cause === undefined ? {} : { cause: options.cause }),
      message: `SessionLog.${options.method}(${target}): ${describe(options.reason)}`
    })
  }
}
