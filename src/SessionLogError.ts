/**
 * Why a session log operation failed. One error, with a `reason` saying which of the ways it can fail.
 */
import { Schema } from "effect"

/** A registered invariant rejected an event: on append (nothing was written) or on load. */
export class InvariantViolation extends Schema.TaggedClass<InvariantViolation>()("InvariantViolation", {
  rule: Schema.String,
  seq: Schema.optionalKey(Schema.Int),
  detail: Schema.String
}) {}

/** The payload can't be stored as JSON (a cycle, a BigInt, a function…). */
export class InvalidPayload extends Schema.TaggedClass<InvalidPayload>()("InvalidPayload", {
  detail: Schema.String
}) {}

/** Stored data is damaged or inconsistent: bad JSON, a seq gap, a header that doesn't match. */
export class Corrupt extends Schema.TaggedClass<Corrupt>()("Corrupt", {
  line: Schema.optionalKey(Schema.Int),
  seq: Schema.optionalKey(Schema.Int),
  detail: Schema.String
}) {}

/** Another process holds the session open for appending. */
export class Locked extends Schema.TaggedClass<Locked>()("Locked", {
  detail: Schema.String
}) {}

/** The storage itself failed (I/O, connection). */
export class StorageFailure extends Schema.TaggedClass<StorageFailure>()("StorageFailure", {
  detail: Schema.String
}) {}

export const Reason = Schema.Union([InvariantViolation, InvalidPayload, Corrupt, Locked, StorageFailure])
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
  }
}

export class SessionLogError extends Schema.TaggedError<SessionLogError>()("SessionLogError", {
  method: Schema.String,
  session: Schema.String,
  reason: Reason,
  message: Schema.String
}) {
  static fromReason(options: { readonly method: string; readonly session: string; readonly reason: Reason }) {
    return new SessionLogError({
      ...options,
      message: `SessionLog.${options.method}(${options.session}): ${describe(options.reason)}`
    })
  }
}
