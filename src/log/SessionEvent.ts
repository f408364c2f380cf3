/**
 * The envelope every session log stores, and how a module declares the event types it knows. The
 * log is shared with the rest of an agent, so `type` is open and `data` of unknown types is kept
 * untouched; a module that owns an event type reads its payload through the type's `Definition`,
 * never through a cast.
 *
 * @since 0.2.0
 */
import * as Schema from "effect/Schema"
import type * as SessionId from "./SessionId.ts"

/**
 * One stored event: its type, its seq in the session (0, 1, 2…), the time it was appended and its
 * JSON payload.
 *
 * @since 0.2.0
 * @category models
 */
export const Entry = Schema.Struct({
  type: Schema.String.check(Schema.isNonEmpty()),
  seq: Schema.Int.check(Schema.isGreaterThanOrEqualTo(0)),
  time: Schema.Int,
  data: Schema.Unknown
})

/**
 * @since 0.2.0
 * @category models
 */
export type Entry = typeof Entry.Type

/**
 * A frozen entry: what every backend answers with.
 *
 * @since 0.2.0
 * @category constructors
 */
export const makeEntry = (type: string, seq: number, time: number, data: unknown): Entry =>
  Object.freeze({ type, seq, time, data })

/**
 * An entry together with the session it was committed to: what live readers receive.
 *
 * @since 0.2.0
 * @category models
 */
export interface Committed {
  readonly session: SessionId.SessionId
  readonly entry: Entry
}

/**
 * A known event type: its name, the schema of its payload, and a guard that tells a payload of
 * that shape. The guard is what reads use: it is the schema's own `is` unless the module supplies
 * a cheaper one that accepts exactly the same values.
 *
 * @since 0.2.0
 * @category definitions
 */
export interface Definition<A> {
  readonly type: string
  readonly schema: Schema.Codec<A, unknown>
  readonly is: (data: unknown) => data is A
}

/**
 * Declares an event type with its payload schema (and, optionally, a faster guard for it).
 *
 * @since 0.2.0
 * @category definitions
 */
export const define = <A>(
  type: string,
  schema: Schema.Codec<A, unknown>,
  is: (data: unknown) => data is A = Schema.is(schema)
): Definition<A> => ({ type, schema, is })

/**
 * The entry's payload when the entry is of the given type and its payload has the type's shape;
 * `undefined` otherwise.
 *
 * @since 0.2.0
 * @category definitions
 */
export const payload = <A>(definition: Definition<A>, entry: Entry): A | undefined =>
  entry.type === definition.type && definition.is(entry.data) ? entry.data : undefined
