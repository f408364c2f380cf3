/**
 * Invariants over stored events, as middleware around ANY `SessionLog` layer: each registered
 * invariant runs on every append before it reaches the backend (a violation fails the append and
 * nothing is written) and on every stored event when a session is read (a violation fails the read,
 * naming the session, the seq and the rule). The log knows no event types of its own: the modules
 * that own them register their invariants here. Invariants describe the data, never a deployment's
 * policy: a log that was valid when written must stay loadable.
 *
 * @since 0.2.0
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { CheckedSessionLog } from "./CheckedSessionLog.ts"
import type * as SessionEvent from "./SessionEvent.ts"
import { SessionLog, type Service } from "./SessionLog.ts"
import { InvariantViolation, SessionLogError } from "./SessionLogError.ts"

/**
 * A rule over the payloads of one event type.
 *
 * @since 0.2.0
 * @category models
 */
export interface Invariant {
  /** The rule's name, as reported in a violation. */
  readonly rule: string
  /** The event type it applies to. */
  readonly eventType: string
  /** `undefined` when the payload holds, otherwise what is wrong. */
  readonly check: (data: unknown) => string | undefined
}

/**
 * An invariant that a payload decodes, strictly (no excess property), with a schema.
 *
 * @since 0.2.0
 * @category constructors
 */
export const fromSchema = <S extends Schema.Decoder<unknown>>(rule: string, eventType: string, schema: S): Invariant => {
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
 * An invariant that an event type's payloads decode, strictly, with its definition's schema.
 *
 * @since 0.2.0
 * @category constructors
 */
export const fromDefinition = <A>(rule: string, definition: SessionEvent.Definition<A>): Invariant =>
  fromSchema(rule, definition.type, definition.schema)

/**
 * A checker for the invariants: the first one an event breaks, or `undefined`.
 *
 * @since 0.2.0
 * @category checking
 */
export const checker = (invariants: ReadonlyArray<Invariant>) => {
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

/**
 * The log that checks every append and every load of `inner` against the invariants.
 *
 * @since 0.2.0
 * @category checking
 */
export const wrap = (inner: Service, invariants: ReadonlyArray<Invariant>): Service => {
  const violation = checker(invariants)
  return {
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
  }
}

/**
 * The `CheckedSessionLog` over the `SessionLog` it is provided with, checking the given invariants.
 *
 * @since 0.2.0
 * @category layers
 */
export const layer = (invariants: ReadonlyArray<Invariant>): Layer.Layer<CheckedSessionLog, never, SessionLog> =>
  Layer.effect(CheckedSessionLog, Effect.map(SessionLog, (inner) => CheckedSessionLog.of(wrap(inner, invariants))))
