/**
 * The session log: an append-only sequence of events per session. Appending assigns the next seq
 * (0, 1, 2… contiguous per session) and the time from `Clock`; reading returns a session's events in
 * order; `subscribe` streams entries as they are committed, for live readers. Backends: this module's
 * in-memory layer, `SessionLogFile` (JSONL) and `SessionLogSql` (PostgreSQL).
 */
import { Clock, Context, Effect, Layer, PubSub, type Scope, Stream } from "effect"
import type * as SessionEvent from "./SessionEvent.ts"
import type { SessionId } from "./SessionId.ts"
import { InvalidPayload, SessionLogError } from "./SessionLogError.ts"

export interface ReadOptions {
  /** Start at this seq instead of 0. */
  readonly fromSeq?: number | undefined
}

export class SessionLog extends Context.Service<SessionLog, {
  /** Appends one event and answers with the committed entry, once it is committed. */
  readonly append: (
    session: SessionId,
    type: string,
    data: unknown
  ) => Effect.Effect<SessionEvent.Entry, SessionLogError>
  /** A session's events in seq order; an unknown session has none. */
  readonly read: (session: SessionId, options?: ReadOptions) => Stream.Stream<SessionEvent.Entry, SessionLogError>
  /**
   * Subscribes to committed entries, across all sessions: the stream carries every entry committed
   * after this effect returns, until the scope closes.
   */
  readonly subscribe: Effect.Effect<Stream.Stream<SessionEvent.Committed>, never, Scope.Scope>
  /** The sessions the log holds. */
  readonly sessions: Effect.Effect<ReadonlyArray<SessionId>, SessionLogError>
}>()("effect-todo-write/SessionLog") {}

const deepFreeze = <A>(value: A): A => {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key])
  }
  return value
}

/**
 * Serializes a payload to JSON text, the form every backend stores. A payload that JSON can't hold
 * is refused rather than silently altered.
 */
export const encodePayload = (
  method: string,
  session: SessionId,
  data: unknown
): Effect.Effect<string, SessionLogError> =>
  Effect.suspend(() => {
    try {
      const json = JSON.stringify(data)
      if (json !== undefined) return Effect.succeed(json)
      return Effect.fail(SessionLogError.fromReason({
        method,
        session,
        reason: new InvalidPayload({ detail: `a ${typeof data} is not JSON` })
      }))
    } catch (cause) {
      return Effect.fail(SessionLogError.fromReason({
        method,
        session,
        reason: new InvalidPayload({ detail: cause instanceof Error ? cause.message : String(cause) })
      }))
    }
  })

/** An immutable copy of a payload, as a durable backend would return it after a round trip. */
export const snapshot = (json: string): unknown => deepFreeze(JSON.parse(json))

export const makeEntry = (type: string, seq: number, time: number, data: unknown): SessionEvent.Entry =>
  deepFreeze({ type, seq, time, data })

/** Keeps every session in memory; for tests and for embedding where durability isn't wanted. */
export const layerMemory: Layer.Layer<SessionLog> = Layer.effect(
  SessionLog,
  Effect.gen(function*() {
    const sessions = new Map<SessionId, Array<SessionEvent.Entry>>()
    const pubsub = yield* Effect.acquireRelease(PubSub.unbounded<SessionEvent.Committed>(), PubSub.shutdown)

    const append = Effect.fn("SessionLog.append")(function*(session: SessionId, type: string, data: unknown) {
      const json = yield* encodePayload("append", session, data)
      const time = yield* Clock.currentTimeMillis
      let entries = sessions.get(session)
      if (entries === undefined) {
        entries = []
        sessions.set(session, entries)
      }
      // No yield between reading the length and pushing: seqs stay contiguous under concurrent appends.
      const entry = makeEntry(type, entries.length, time, snapshot(json))
      entries.push(entry)
      yield* PubSub.publish(pubsub, { session, entry })
      return entry
    })

    const read = (session: SessionId, options?: ReadOptions) =>
      Stream.suspend(() => Stream.fromArray((sessions.get(session) ?? []).slice(options?.fromSeq ?? 0)))

    return SessionLog.of({
      append,
      read,
      subscribe: Effect.map(PubSub.subscribe(pubsub), Stream.fromSubscription),
      sessions: Effect.sync(() => [...sessions.keys()])
    })
  })
)
