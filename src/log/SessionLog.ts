/**
 * The session log: an append-only sequence of events per session. Appending assigns the next seq
 * (0, 1, 2… contiguous per session) and the time from `Clock`; reading returns a session's events in
 * order; `subscribe` streams entries as they are committed, for live readers.
 *
 * Backends are built with `make` from a few primitives (store a batch, read from a seq, list
 * sessions, optionally announce other processes' commits), as `KeyValueStore.make` builds its
 * service. The core owns what every backend shares: the payload's JSON snapshot and encoding, the
 * time, group commit (appends that arrive while a session's batch is being stored go into its next
 * batch), the rule that seqs are contiguous, live subscriptions and error mapping.
 *
 * @since 0.2.0
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as PubSub from "effect/PubSub"
import * as Result from "effect/Result"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as GroupCommit from "./internal/groupCommit.ts"
import * as Hearing from "./internal/hearing.ts"
import * as Json from "./internal/json.ts"
import * as Memory from "./internal/memory.ts"
import * as StorageFailure from "./internal/storageFailure.ts"
import * as SessionEvent from "./SessionEvent.ts"
import * as SessionId from "./SessionId.ts"
import { Corrupt, InvalidPayload, InvalidSessionId, type Reason, SessionLogError } from "./SessionLogError.ts"

/**
 * Where a read starts.
 *
 * @since 0.2.0
 * @category models
 */
export interface ReadOptions {
  /** Start at this seq instead of 0. */
  readonly fromSeq?: number | undefined
}

/**
 * The service's shape, shared by `SessionLog` and `CheckedSessionLog`.
 *
 * @since 0.2.0
 * @category models
 */
export interface Service {
  /** Appends one event and answers with the committed entry, once it is committed. */
  readonly append: (session: SessionId.SessionId, type: string, data: unknown) => Effect.Effect<SessionEvent.Entry, SessionLogError>
  /** A session's events in seq order; an unknown session has none. */
  readonly read: (session: SessionId.SessionId, options?: ReadOptions) => Stream.Stream<SessionEvent.Entry, SessionLogError>
  /**
   * Subscribes to committed entries, across all sessions: the stream carries every entry committed
   * after this effect returns, until the scope closes.
   */
  readonly subscribe: Effect.Effect<Stream.Stream<SessionEvent.Committed>, never, Scope.Scope>
  /** The sessions the log holds, sorted. */
  readonly sessions: Effect.Effect<ReadonlyArray<SessionId.SessionId>, SessionLogError>
}

/**
 * A raw session log backend, unchecked: what a backend layer provides. Code that folds payloads
 * reads a `CheckedSessionLog` instead.
 *
 * @since 0.2.0
 * @category services
 */
export class SessionLog extends Context.Service<SessionLog, Service>()("effect-todo-write/SessionLog") {}

/**
 * An event ready to store: its payload already snapshotted and encoded by the core.
 *
 * @since 0.2.0
 * @category backends
 */
export interface Prepared {
  readonly type: string
  readonly time: number
  /** The payload's frozen JSON copy: what the committed entry carries. */
  readonly data: unknown
  /** The same payload as JSON text, for backends that store text. */
  readonly json: string
}

/**
 * Announcements a backend may have missed (its listener was down, and listens again): the core reads
 * on every session it has published from.
 *
 * @since 0.2.0
 * @category backends
 */
export interface Missed {
  readonly _tag: "Missed"
}

/**
 * A commit another process made, as a backend announces it.
 *
 * @since 0.2.0
 * @category backends
 */
export interface Announcement {
  readonly session: string
  /** The last seq committed. */
  readonly seq: number
  /** The first seq of the batch committed, if the backend knows it. */
  readonly first?: number | undefined
  /**
   * The entries committed from `first` to `seq`, in seq order, if the backend read them as it heard
   * of the commit: the core publishes them as they are, without reading the session again.
   */
  readonly entries?: ReadonlyArray<SessionEvent.Entry> | undefined
}

/**
 * What a backend primitive fails with: one of the log's reasons, or the foreign error (I/O, driver)
 * that the core reports as a storage failure with that error as its cause.
 *
 * @since 0.2.0
 * @category backends
 */
export type Failure = Reason | Error

/**
 * The primitives a backend supplies; `make` builds the service from them.
 *
 * @since 0.2.0
 * @category backends
 */
export interface Backend {
  /**
   * Stores a batch of events for one session, in order, and answers the seq of its first one; the
   * rest follow it. Answers only once the batch is committed. The core never calls it twice at
   * once for one session.
   */
  readonly append: (session: SessionId.SessionId, batch: ReadonlyArray<Prepared>) => Effect.Effect<number, Failure>
  /** A session's committed entries from `fromSeq` on, in seq order. */
  readonly read: (session: SessionId.SessionId, fromSeq: number) => Stream.Stream<SessionEvent.Entry, Failure>
  /** The names of the sessions held; the core keeps the valid ids and sorts them. */
  readonly sessions: Effect.Effect<ReadonlyArray<string>, Failure>
  /**
   * Starts hearing of the commits other processes make: once it succeeds, each commit made from
   * then on is announced on its stream (the session, the last seq committed and, if known, the
   * first of its batch) until the scope closes. The core starts it when `subscribe` is first
   * called, and closes it once no subscriber is left (so a process that only appends neither holds
   * a listener nor hears its own commits back); it reads what each announces and publishes it to
   * subscribers, each entry once.
   */
  readonly announcements?: Effect.Effect<Stream.Stream<Announcement | Missed, Failure>, Failure, Scope.Scope> | undefined
  /** The largest event it stores and reads back (UTF-8 of type + payload JSON); larger ones are refused unbatched. */
  readonly maxEventBytes?: number | undefined
  /**
   * Why it can't store an event that is otherwise JSON (its type, the payload's JSON text and its
   * frozen copy), if it can't: the append is refused (`InvalidPayload`) on its own, never batched
   * with others it would fail.
   */
  readonly refuse?: ((type: string, json: string, data: unknown) => string | undefined) | undefined
  /**
   * Optionally, stores a batch at once, on the calling thread, if the backend can right now (the
   * file log: a lone batch, with blocking calls): the seq of its first event, or the failure, once
   * the batch is committed, as `append` answers; `undefined`, having done nothing, if it can't (the
   * core then calls `append`). The core calls it where it would call `append` while no other
   * session's batch is being stored, after letting the fibers ready to run go first (their appends
   * to the session join the batch); it spares a lone append the effects around `append`.
   */
  readonly appendNow?: ((session: SessionId.SessionId, batch: ReadonlyArray<Prepared>) => Result.Result<number, Failure> | undefined) | undefined
}

/**
 * Turns a backend failure into the log's error. A foreign error becomes a `StorageFailure` that says
 * what happened (the disk is full, the file system is read-only…) and is kept as the cause.
 *
 * @since 0.2.0
 * @category backends
 */
export const toError: (method: string, session?: string) => (failure: Failure) => SessionLogError = StorageFailure.toError

/** An id from a caller that got around the type is refused before any I/O: ids become file names and keys. */
const invalidId = (method: string, session: unknown): SessionLogError => {
  const id = JSON.stringify(String(session))
  return SessionLogError.fromReason({ method, session: id, reason: new InvalidSessionId({ detail: `${id} is not a SessionId` }) })
}

/** A payload the log can't store, refused before any I/O. */
const refusedPayload = (session: SessionId.SessionId, detail: string) =>
  Effect.fail(SessionLogError.fromReason({ method: "append", session, reason: new InvalidPayload({ detail }) }))

/**
 * Builds the service from a backend's primitives. Needs a scope: subscriptions and the reader of
 * announcements live as long as it.
 *
 * @since 0.2.0
 * @category constructors
 */
export const make = Effect.fnUntraced(function*(backend: Backend) {
  const scope = yield* Effect.scope
  // What the log was built with (its logger, the backend's services): announcements run with it,
  // whoever subscribes first.
  const built = yield* Effect.context<never>()
  const pubsub = yield* Effect.acquireRelease(PubSub.unbounded<SessionEvent.Committed>(), PubSub.shutdown)
  const { hearing, publish } = Hearing.make({
    announcements: backend.announcements,
    pubsub,
    scope,
    built,
    read: (session, fromSeq) => read(session, { fromSeq })
  })

  const store = GroupCommit.make(backend, scope, publish)

  const append = (session: SessionId.SessionId, type: string, data: unknown) =>
    Clock.clockWith((clock) => {
      if (!SessionId.is(session)) return Effect.fail(invalidId("append", session))
      const encoded = Json.encode(type, data, backend.maxEventBytes)
      if ("problem" in encoded) return refusedPayload(session, encoded.problem)
      const problem = backend.refuse?.(type, encoded.json, encoded.copy)
      if (problem !== undefined) return refusedPayload(session, problem)
      return store(session, { type, time: clock.currentTimeMillisUnsafe(), data: encoded.copy, json: encoded.json })
    })

  const read = (session: SessionId.SessionId, options?: ReadOptions): Stream.Stream<SessionEvent.Entry, SessionLogError> =>
    Stream.suspend(() => {
      if (!SessionId.is(session)) return Stream.fail(invalidId("read", session))
      const fromSeq = options?.fromSeq ?? 0
      let expected = fromSeq
      return backend.read(session, fromSeq).pipe(
        Stream.mapError(toError("read", session)),
        // Every backend's seqs run on from where the read starts, with no gap or repeat.
        Stream.mapArrayEffect((entries) => {
          for (const entry of entries) {
            if (entry.seq !== expected) {
              return Effect.fail(SessionLogError.fromReason({
                method: "read",
                session,
                reason: new Corrupt({ seq: expected, detail: `seq ${entry.seq} where ${expected} was expected` })
              }))
            }
            expected++
          }
          return Effect.succeed(entries)
        })
      )
    })

  return SessionLog.of({
    append,
    read,
    // Announcements are heard before the subscription is made: whatever another process commits
    // after this returns is announced to it.
    subscribe: Effect.andThen(hearing, Effect.map(PubSub.subscribe(pubsub), Stream.fromSubscription)),
    sessions: backend.sessions.pipe(
      Effect.map((names) => names.filter(SessionId.is).sort()),
      Effect.mapError(toError("sessions"))
    )
  })
})

/**
 * Keeps every session in memory; for tests and for embedding where durability isn't wanted.
 *
 * @since 0.2.0
 * @category layers
 */
export const layerMemory: Layer.Layer<SessionLog> = Layer.effect(SessionLog, Effect.suspend(() => make(Memory.backend())))
