/**
 * Group commit, the core's: per session, one batch is stored at a time, and the appends that arrive
 * while it is stored gather into the next; the caller that finds the session idle stores its batch
 * on its own fiber (no writer fiber, no hop when uncontended), or at once through the backend's
 * `appendNow`.
 */
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Result from "effect/Result"
import type * as Scope from "effect/Scope"
import * as SessionEvent from "../SessionEvent.ts"
import type * as SessionId from "../SessionId.ts"
import type { Backend, Failure, Prepared } from "../SessionLog.ts"
import { type SessionLogError, StorageFailure } from "../SessionLogError.ts"
import { forkOrElse } from "./forkOrElse.ts"
import { toError } from "./storageFailure.ts"

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

/** How many batches may be stored at once, back to back, before the event loop must turn. */
export const maxBlockingInARow = 2

/** Runs `f` on the event loop's next turn. */
const onNextTurn = (f: () => void): void => {
  if (typeof setImmediate === "function") setImmediate(f)
  else setTimeout(f, 0)
}

/**
 * The store of a log over `backend`: appends a prepared event to a session and answers its entry,
 * once committed (and published, through `publish`). Batches handed on to fibers of their own live
 * in `scope`.
 */
export const make = (
  backend: Backend,
  scope: Scope.Scope,
  publish: (session: SessionId.SessionId, entries: ReadonlyArray<SessionEvent.Entry>) => void
) => {
  const lanes = new Map<SessionId.SessionId, Lane>()
  // Batches stored at once since the event loop last turned. Such a batch blocks the thread and
  // yields only a microtask before it: back to back (one fiber appending in a loop) they would keep
  // the loop from turning, so every `maxBlockingInARow`-th waits for a turn instead, and the loop's
  // I/O (other connections, the journal's checkpoints) waits at most that many lone batches.
  let sinceTurn = 0
  const turned = () => {
    sinceTurn = 0
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

  const closed = (session: SessionId.SessionId, detail: string) => toError("append", session)(new StorageFailure({ detail }))

  /**
   * A batch handed to a fiber that never ran it (the log closed first: a closed scope gets an
   * unstarted fiber; one forked before, uninterruptible, runs and is waited for): its appends, and
   * those gathered behind it, fail, and the session is free. No append waits forever.
   */
  const abandoned = (session: SessionId.SessionId, lane: Lane, batch: ReadonlyArray<Waiting>) => {
    if (lanes.get(session) === lane) lanes.delete(session)
    const failed = Exit.fail(closed(session, "the log was closed before this append was stored"))
    for (const waiting of [...batch, ...lane.waiting]) if (waiting.done !== undefined) Deferred.doneUnsafe(waiting.done, failed)
  }

  /** After a batch: what gathered meanwhile goes to a fiber of its own, or the session is free. */
  const handOff = <A>(session: SessionId.SessionId, lane: Lane, result: A): Effect.Effect<A> => {
    const next = lane.waiting
    lane.waiting = []
    if (next.length === 0) {
      lanes.delete(session)
      return Effect.succeed(result)
    }
    // Uninterruptible from its start: once it runs, `guarded` answers every append it holds.
    return Effect.as(forkOrElse(lead(session, lane, next), scope, () => abandoned(session, lane, next), { uninterruptible: true }), result)
  }

  /**
   * If a batch's storing stops unexpectedly (a defect), every append it was to answer fails with
   * that cause, and the session is free for the next caller: no append waits forever.
   */
  const guarded = <A>(session: SessionId.SessionId, lane: Lane, batch: () => ReadonlyArray<Waiting>) =>
    Effect.onExit<A, never, never, never>((exit) => {
      if (Exit.isSuccess(exit)) return Effect.void
      return Effect.sync(() => {
        // Only this lane: after a defect, nested guards run in turn, and the session may have a new one.
        if (lanes.get(session) === lane) lanes.delete(session)
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
      // Suspended: a backend that throws as it is called fails this batch's fiber, not the caller's.
      Effect.exit(Effect.suspend(() => backend.append(session, batch.map((waiting) => waiting.prepared)))),
      (exit) => handOff(session, lane, settle(session, batch, exit))
    ).pipe(guarded(session, lane, () => batch))

  /**
   * The same through the backend's `appendNow`, when it has one: the fibers ready to run go first
   * (appends among them to this session join the batch; after `maxBlockingInARow` batches stored at
   * once with no turn of the event loop, the loop turns first), then the batch is stored at once if
   * the backend can, with no effect around it; through `lead` if it can't.
   */
  const leadNow = (
    appendNow: NonNullable<Backend["appendNow"]>,
    session: SessionId.SessionId,
    lane: Lane,
    own: Waiting
  ): Effect.Effect<Exit.Exit<ReadonlyArray<SessionEvent.Entry>, SessionLogError>> => {
    let batch: ReadonlyArray<Waiting> = [own]
    // The first since the loop turned asks to hear of its next turn; the one that reaches the bound
    // waits for that turn.
    if (sinceTurn === 0) onNextTurn(turned)
    const first = sinceTurn < maxBlockingInARow ? afterReadyFibers : Effect.yieldNow
    sinceTurn = sinceTurn < maxBlockingInARow ? sinceTurn + 1 : 0
    return Effect.flatMap(first, () => {
      if (lane.waiting.length > 0) {
        batch = [own, ...lane.waiting]
        lane.waiting = []
      }
      const stored = appendNow(session, batch.map((waiting) => waiting.prepared))
      if (stored === undefined) return lead(session, lane, batch)
      return handOff(session, lane, settle(session, batch, Result.isSuccess(stored) ? Exit.succeed(stored.success) : Exit.fail(stored.failure)))
    }).pipe(guarded(session, lane, () => batch))
  }

  /** Joins the batch gathering behind the one in flight, and waits for its answer. */
  const wait = (lane: Lane, prepared: Prepared) => {
    const done = Deferred.makeUnsafe<SessionEvent.Entry, SessionLogError>()
    lane.waiting.push({ prepared, done })
    return Deferred.await(done)
  }

  /**
   * No batch is being stored for the session: this caller stores it, and whatever arrives meanwhile
   * after it. While another session's batch is being stored, this one is not alone: it goes through
   * `append` at once, without waiting for the fibers ready to run (a hop that cost ~2.5 µs per append
   * at 128 sessions). Appends to this session right behind it gather into its next batch.
   */
  const leadOwn = (session: SessionId.SessionId, prepared: Prepared): Effect.Effect<SessionEvent.Entry, SessionLogError> => {
    const alone = lanes.size === 0
    const mine: Lane = { waiting: [] }
    lanes.set(session, mine)
    const own: Waiting = { prepared, done: undefined }
    const stored = backend.appendNow === undefined || !alone
      ? lead(session, mine, [own])
      : leadNow(backend.appendNow, session, mine, own)
    return Effect.flatMap(stored, (exit) => Exit.map(exit, (entries) => entries[0]!))
  }
  // Uninterruptible from the look at the session's lane: a caller that becomes its leader starts
  // storing at once (an interruption in between left a lane no one stored, and every later append to
  // the session waiting on it). A caller that joins a batch may be interrupted; its append is stored
  // all the same.
  return (session: SessionId.SessionId, prepared: Prepared): Effect.Effect<SessionEvent.Entry, SessionLogError> =>
    Effect.uninterruptibleMask((restore) =>
      Effect.suspend(() => {
        // A closed log stores nothing: its backend's resources (files, locks, connections) are gone.
        if (scope.state._tag === "Closed") return Effect.fail(closed(session, "the log is closed"))
        const lane = lanes.get(session)
        return lane === undefined ? leadOwn(session, prepared) : restore(wait(lane, prepared))
      })
    )
}
