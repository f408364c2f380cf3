/**
 * Invariants over stored events, as middleware around ANY `SessionLog` layer: each registered
 * invariant runs on every append before it reaches the backend (a violation fails the append and
 * nothing is written) and on every stored event when a session is read (a violation fails the read,
 * naming the session, the seq and the rule). Invariants describe the data, never a deployment's
 * policy: a log that was valid when written must stay loadable.
 */
import { Effect, Layer, Result, Schema, Stream } from "effect"
import * as SessionEvent from "./SessionEvent.ts"
import { SessionLog } from "./SessionLog.ts"
import { InvariantViolation, SessionLogError } from "./SessionLogError.ts"
import * as Todo from "./Todo.ts"

export interface Invariant {
  /** The rule's name, as reported in a violation. */
  readonly rule: string
  /** The event type it applies to. */
  readonly eventType: string
  /** `undefined` when the payload holds, otherwise what is wrong. */
  readonly check: (data: unknown) => string | undefined
}

/** An invariant that a payload decodes, strictly, with a schema. */
export const fromSchema = <S extends Schema.Decoder<unknown>>(
  rule: string,
  eventType: string,
  schema: S
): Invariant => {
  const decode = Schema.decodeUnknownResult(schema, { onExcessProperty: "error" })
  return {
    rule,
    eventType,
    check: (data) => {
      const result = decode(data)
      return Result.isFailure(result) ? result.failure.message : undefined
    }
  }
}

/**
 * The durable shape of `todo/write`: `todos` is an array of closed objects with non-empty,
 * already-trimmed, exactly unique content and a known status. Not the in_progress count.
 */
const todoWriteSchema = fromSchema("todo/write shape", SessionEvent.TodoWrite, Todo.StoredWrite)

export const todoWrite: Invariant = {
  ...todoWriteSchema,
  check: (data) => Todo.isExactStoredWrite(data) ? undefined : todoWriteSchema.check(data)
}

/** The invariants this package registers by default. */
export const defaults: ReadonlyArray<Invariant> = [todoWrite]

/** A checker for the invariants: the first one an event breaks, or `undefined`. */
export const checker = (invariants: ReadonlyArray<Invariant> = defaults) => {
  const byType = new Map<string, Array<Invariant>>()
  for (const invariant of invariants) {
    const list = byType.get(invariant.eventType) ?? []
    list.push(invariant)
    byType.set(invariant.eventType, list)
  }
  return (type: string, data: unknown, seq?: number): InvariantViolation | undefined => {
    const checks = byType.get(type)
    if (checks === undefined) return undefined
    for (const invariant of checks) {
      const detail = invariant.check(data)
      if (detail !== undefined) {
        return new InvariantViolation(
          seq === undefined ? { rule: invariant.rule, detail } : { rule: invariant.rule, seq, detail }
        )
      }
    }
    return undefined
  }
}

/** The `SessionLog` that checks every append and every load of `inner` against the invariants. */
export const wrap = (
  inner: SessionLog["Service"],
  invariants: ReadonlyArray<Invariant> = defaults
): SessionLog["Service"] => {
  const violation = checker(invariants)
  return SessionLog.of({
    ...inner,
    append: (session, type, data) => {
      const reason = violation(type, data)
      return reason === undefined
        ? inner.append(session, type, data)
        : Effect.fail(SessionLogError.fromReason({ method: "append", session, reason }))
    },
    read: (session, options) =>
      inner.read(session, options).pipe(
        // Whole chunks at a time: a per-entry effect costs more than the checks themselves.
        Stream.mapArrayEffect((entries) => {
          for (const entry of entries) {
            const reason = violation(entry.type, entry.data, entry.seq)
            if (reason !== undefined) return Effect.fail(SessionLogError.fromReason({ method: "read", session, reason }))
          }
          return Effect.succeed(entries)
        })
      )
  })
}

/** Wraps the `SessionLog` it is provided with; the wrapped service checks every append and every load. */
export const layer = (invariants: ReadonlyArray<Invariant> = defaults): Layer.Layer<SessionLog, never, SessionLog> =>
  Layer.effect(SessionLog, Effect.map(SessionLog, (inner) => wrap(inner, invariants)))
