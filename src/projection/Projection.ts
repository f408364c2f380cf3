/**
 * A projection: a pure fold over a session's events, with a key, an initial state, a state schema
 * (for checkpoints) and a version that changes whenever the fold does, so stored state from an older
 * fold is never trusted. Steps read payloads through their event's `SessionEvent.Definition`.
 *
 * @since 0.2.0
 */
import type * as Schema from "effect/Schema"
import type * as SessionEvent from "../log/SessionEvent.ts"

/**
 * A fold over a session's events.
 *
 * @since 0.2.0
 * @category models
 */
export interface Projection<S> {
  readonly key: string
  readonly version: number
  readonly initial: S
  readonly step: (state: S, entry: SessionEvent.Entry) => S
  readonly schema: Schema.Codec<S, unknown>
}

/**
 * Declares a projection.
 *
 * @since 0.2.0
 * @category constructors
 */
export const make = <S>(projection: Projection<S>): Projection<S> => projection
