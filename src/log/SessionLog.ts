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
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as PubSub from "effect/PubSub"
import * as Result from "effect/Result"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
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
   * Commits made by other processes, as they are announced (the session and the last seq
   * committed). The core reads what each announces and publishes it to subscribers, each entry once.
   */
  readonly announcements?: Stream.Stream<{ readonly session: string; readonly seq: number }, Failure> | undefined
  /** The largest event it stores and reads back (UTF-8 of type + payload JSON); larger ones are refused unbatched. */
  readonly maxEventBytes?: number | undefined
  /**
   * Optionally, stores a batch at once, on the calling thread, if the backend can right now (the
   * file log: a lone batch, with blocking calls): the seq of its first event, or the failure, once
   * the batch is committed, as `append` answers; `undefined`, having done nothing, if it can't (the
   * core then calls `append`). The core calls it where it would call `append`, after letting the
   * fibers ready to run go first (their appends to the session join the batch); it spares a lone
   * append the effects around `append`.
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
export const toError = (method: string, session?: string) => (failure: Failure): SessionLogError => {
  if (failure instanceof SessionLogError) return failure
  if (failure instanceof Error) {
    return SessionLogError.fromReason({ method, session, reason: StorageFailure.fromError(failure), cause: failure })
  }
  return SessionLogError.fromReason({ method, session, reason: failure })
}

/** An id from a caller that got around the type is refused before any I/O: ids become file names and keys. */
const invalidId = (method: string, session: unknown): SessionLogError => {
  const id = JSON.stringify(String(session))
  return SessionLogError.fromReason({ method, session: id, reason: new InvalidSessionId({ detail: `${id} is not a SessionId` }) })
}

interface Waiting {
  readonly prepared: Prepared
  /** Where its answer goes; none for the caller that stores the batch, which gets it directly. */
  readonly done: Deferred.Deferred<SessionEvent.Entry, SessionLogError> | undefined
}

/** A session's appends: while one batch is being stored, the next gathers in `waiting`. */
interface Lane {
  waiting: Array<Waiting>
}

/**
 * Resumes in a microtask: after every fiber the scheduler is running now or has ready in the same
 * batch (they run synchronously, one after another, before microtasks), without waiting a turn of
 * the event loop (`Effect.yieldNow`, a `setImmediate`, costs several times more). What it doesn't
 * wait for is I/O completing in that turn: an append such I/O starts comes after this batch.
 */
const afterReadyFibers: Effect.Effect<void> = Effect.callback<void>((resume) => {
  queueMicrotask(() => resume(Effect.void))
})

/**
 * Builds the service from a backend's primitives. Needs a scope: subscriptions and the reader of
 * announcements live as long as it.
 *
 * @since 0.2.0
 * @category constructors
 */
export const make = Effect.fnUntraced(function*(backend: Backend) {
  const scope = yield* Effect.scope
  const pubsub = yield* Effect.acquireRelease(PubSub.unbounded<SessionEvent.Committed>(), PubSub.shutdown)
  const lanes = new Map<SessionId.SessionId, Lane>()
  // The last seq published per session, kept only when other processes' commits arrive too, so
  // that each entry goes out once.
  const published = backend.announcements === undefined ? undefined : new Map<SessionId.SessionId, number>()

  const publish = (session: SessionId.SessionId, entries: ReadonlyArray<SessionEvent.Entry>) => {
    for (const entry of entries) {
      if (published !== undefined) {
        if (entry.seq <= (published.get(session) ?? -1)) continue
        published.set(session, entry.seq)
      }
      PubSub.publishUnsafe(pubsub, { session, entry })
    }
  }

  /**
   * A batch's appends answered, once the backend answered `stored` for it: its entries are
   * published, then every waiting append gets its own; answers them all (or the failure) for the
   * caller that stored its own append.
   */
  const settle = (
    session: SessionId.SessionId,
    batch: ReadonlyArray<Waiting>,
    stored: Exit.Exit<number, Failure>
  ): Exit.Exit<ReadonlyArray<SessionEvent.Entry>, SessionLogError> => {
    if (Exit.isFailure(stored)) {
      const failed = Exit.failCause(stored.cause).pipe(Exit.mapError(toError("append", session)))
      for (const waiting of batch) if (waiting.done !== undefined) Deferred.doneUnsafe(waiting.done, failed)
      return failed
    }
    const entries = batch.map(({ prepared }, i) => SessionEvent.makeEntry(prepared.type, stored.value + i, prepared.time, prepared.data))
    // Published before acknowledging: whoever subscribes after an append returns never sees it.
    publish(session, entries)
    for (let i = 0; i < batch.length; i++) {
      const done = batch[i]!.done
      if (done !== undefined) Deferred.doneUnsafe(done, Exit.succeed(entries[i]!))
    }
    return Exit.succeed(entries)
  }

  /** After a batch: what gathered meanwhile goes to a fiber of its own, or the session is free. */
  const handOff = <A>(session: SessionId.SessionId, lane: Lane, result: A): Effect.Effect<A> => {
    const next = lane.waiting
    lane.waiting = []
    if (next.length === 0) {
      lanes.delete(session)
      return Effect.succeed(result)
    }
    return Effect.as(Effect.forkIn(Effect.uninterruptible(lead(session, lane, next)), scope), result)
  }

  /**
   * If a batch's storing stops unexpectedly (a defect), every append it was to answer fails with
   * that cause, and the session is free for the next caller: no append waits forever.
   */
  const guarded = <A>(session: SessionId.SessionId, lane: Lane, batch: () => ReadonlyArray<Waiting>) =>
    Effect.onExit<A, never, never, never>((exit) => {
      if (Exit.isSuccess(exit)) return Effect.void
      return Effect.sync(() => {
        lanes.delete(session)
        const failed = Exit.failCause(Cause.map(exit.cause, toError("append", session)))
        for (const waiting of [...batch(), ...lane.waiting]) if (waiting.done !== undefined) Deferred.doneUnsafe(waiting.done, failed)
      })
    })

  /**
   * Stores one batch for the session and answers its appends, then hands what gathered meanwhile
   * to a fiber of its own, so that a caller's append returns once its batch is stored, however busy
   * the session stays; answers the batch's entries (or failure) for a caller that stores its own
   * append.
   */
  const lead = (
    session: SessionId.SessionId,
    lane: Lane,
    batch: ReadonlyArray<Waiting>
  ): Effect.Effect<Exit.Exit<ReadonlyArray<SessionEvent.Entry>, SessionLogError>> =>
    Effect.flatMap(
      Effect.exit(backend.append(session, batch.map((waiting) => waiting.prepared))),
      (exit) => handOff(session, lane, settle(session, batch, exit))
    ).pipe(guarded(session, lane, () => batch))

  /**
   * The same through the backend's `appendNow`, when it has one: the fibers ready to run go first
   * (appends among them to this session join the batch), then the batch is stored at once if the
   * backend can, with no effect around it; through `lead` if it can't.
   */
  const leadNow = (
    appendNow: NonNullable<Backend["appendNow"]>,
    session: SessionId.SessionId,
    lane: Lane,
    own: Waiting
  ): Effect.Effect<Exit.Exit<ReadonlyArray<SessionEvent.Entry>, SessionLogError>> => {
    let batch: ReadonlyArray<Waiting> = [own]
    return Effect.flatMap(afterReadyFibers, () => {
      if (lane.waiting.length > 0) {
        batch = [own, ...lane.waiting]
        lane.waiting = []
      }
      const stored = appendNow(session, batch.map((waiting) => waiting.prepared))
      if (stored === undefined) return lead(session, lane, batch)
      return handOff(session, lane, settle(session, batch, Result.isSuccess(stored) ? Exit.succeed(stored.success) : Exit.fail(stored.failure)))
    }).pipe(guarded(session, lane, () => batch))
  }

  const append = (session: SessionId.SessionId, type: string, data: unknown) =>
    Clock.clockWith((clock) => {
      if (!SessionId.is(session)) return Effect.fail(invalidId("append", session))
      const encoded = Json.encode(type, data, backend.maxEventBytes)
      if ("problem" in encoded) {
        return Effect.fail(
          SessionLogError.fromReason({ method: "append", session, reason: new InvalidPayload({ detail: encoded.problem }) })
        )
      }
      const prepared: Prepared = { type, time: clock.currentTimeMillisUnsafe(), data: encoded.copy, json: encoded.json }
      const lane = lanes.get(session)
      if (lane !== undefined) {
        const done = Deferred.makeUnsafe<SessionEvent.Entry, SessionLogError>()
        lane.waiting.push({ prepared, done })
        return Deferred.await(done)
      }
      // No batch is being stored for this session: this caller stores it, and whatever arrives
      // meanwhile after it. Uninterruptible: others wait on what it stores.
      const mine: Lane = { waiting: [] }
      lanes.set(session, mine)
      const own: Waiting = { prepared, done: undefined }
      const stored = backend.appendNow === undefined ? lead(session, mine, [own]) : leadNow(backend.appendNow, session, mine, own)
      return Effect.flatMap(Effect.uninterruptible(stored), (exit) => Exit.map(exit, (entries) => entries[0]!))
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

  if (backend.announcements !== undefined && published !== undefined) {
    const announced = (session: SessionId.SessionId, seq: number) => {
      // From the last entry published for the session, so entries whose announcement was missed come too.
      const from = (published.get(session) ?? seq - 1) + 1
      if (from > seq) return Effect.void
      return read(session, { fromSeq: from }).pipe(
        Stream.takeWhile((entry) => entry.seq <= seq),
        Stream.runCollect,
        Effect.map((entries) => publish(session, entries))
      )
    }
    yield* backend.announcements.pipe(
      Stream.runForEach(({ session, seq }) =>
        SessionId.is(session) && Number.isInteger(seq)
          ? announced(session, seq).pipe(
            Effect.catch((error) => Effect.logWarning(`SessionLog: can't read a commit another process announced: ${error.message}`))
          )
          : Effect.void
      ),
      Effect.catch((failure) =>
        Effect.logWarning(`SessionLog: announcements of other processes' commits ended: ${toError("subscribe")(failure).message}`)
      ),
      Effect.forkScoped
    )
  }

  return SessionLog.of({
    append,
    read,
    subscribe: Effect.map(PubSub.subscribe(pubsub), Stream.fromSubscription),
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
