/**
 * The session writers a file log holds: each opened on demand under its session's lock, and closed
 * again once idle, so a long-running process that appends to many sessions holds the descriptors and
 * locks of the ones in use, not of every session it ever touched. A session opened from the start
 * (`open`) stays held until the log closes; so does a writer that lost its session, which must go on
 * refusing appends, and one whose batches a journal may hold past this process (a failed batch that
 * may be replayed, `Writer.replayable`, or a sync of its file that failed): its lock goes only after
 * the journal does (see `HeldBack`).
 *
 * The pool also decides which batches are alone: no other batch in flight, and either no batch at
 * all started within `contentionWindowMs`, or the last `aloneAfterBatches` batches were all this
 * session's. A lone batch is written at once, blocking the thread on its fsync (`now`, see
 * `BlockingIo`); batches of sessions appending concurrently go through the thread pool (`use`),
 * where their fsyncs (or their shared journal's) overlap. (Before a lone batch, the log core lets
 * the fibers ready to run go first: appends on their way join it, or make it contended.)
 */
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as FileSystem from "effect/FileSystem"
import type * as Path from "effect/Path"
import * as Scope from "effect/Scope"
import * as Semaphore from "effect/Semaphore"
import type * as SessionId from "../SessionId.ts"
import { OwnershipLost, StorageFailure } from "../SessionLogError.ts"
import * as Format from "./Format.ts"
import type * as JournalCommitter from "./JournalCommitter.ts"
import * as Lock from "./Lock.ts"
import type * as Owner from "./Owner.ts"
import * as Recovery from "./Recovery.ts"
import * as Writer from "./Writer.ts"

interface Held {
  readonly writer: Writer.Writer
  readonly scope: Scope.Closeable
  /** Batches being written right now: a busy writer is never closed. */
  busy: number
  /** Completed once `busy` drops to 0, for a close waiting on it (see `drainedBeforeClose`). */
  drained: Deferred.Deferred<void> | undefined
  lastUsed: number
  readonly pinned: boolean
}

/**
 * The locks of writers whose batches a journal of this log may hold past this process (a failed batch
 * that may be replayed, or a sync of its file that failed: see `Coverage`), handed over as they close:
 * released as the log's last step, once its journals are removed, so that no other process appends
 * where a replay would go. If one of its journals stays (kept for recovery, or not removable), their
 * files stay: the sessions are taken over, and the journal replayed first, only once this process is
 * gone.
 */
export interface HeldBack {
  readonly locks: Array<{ readonly lock: Lock.Held; readonly scope: Scope.Closeable }>
  /** Whether one of the log's journals stays on disk as it closes: the journal's answer, once it is made. */
  journalStays: () => boolean
}

/** Starts holding back locks until the current scope closes: made before the journal, so that it runs after it. */
export const holdBack = Effect.gen(function*() {
  const heldBack: HeldBack = { locks: [], journalStays: () => false }
  yield* Effect.addFinalizer(() =>
    Effect.suspend(() => {
      const stays = heldBack.journalStays()
      // Each on its own: one that fails to close must not leave the others held.
      return Effect.forEach(heldBack.locks, ({ lock, scope }) => {
        if (stays) lock.keep()
        return Effect.ignoreCause(Scope.close(scope, Exit.void))
      }, { discard: true })
    })
  )
  return heldBack
})

/** Where the writers live and how they are opened. */
export interface Options {
  readonly fs: FileSystem.FileSystem
  readonly path: Path.Path
  readonly directory: string
  readonly self: Owner.Owner
  readonly journal: JournalCommitter.Committer | undefined
  readonly maxLineBytes: number
  /** A writer unused this long is closed (its lock released). */
  readonly idle: Duration.Duration
  readonly heldBack: HeldBack
}

/**
 * How recently a batch must have started for the next to count as contended: agents append seconds
 * apart, so only sessions appending at once are within it.
 */
export const contentionWindowMs = 50

/** How many batches in a row one session must have started to count as alone however fast it appends. */
export const aloneAfterBatches = 8

/** Starts the pool in the current scope: its writers, and the sweeper that closes idle ones, live as long. */
export const make = Effect.fnUntraced(function*(options: Options) {
  const { fs, path, directory, journal } = options
  const layerScope = yield* Effect.scope
  // The clock of the fiber that builds the pool, as its sweeper's: read at once by `now`.
  const clock = yield* Clock.Clock
  const held = new Map<SessionId.SessionId, Held>()
  const opening = yield* Semaphore.make(1)
  // The writers live in a scope of their own. As the log closes, an open under way finishes first
  // (the finalizer after this, which runs before it, waits for its permit), then the writers close:
  // an open running on into closed scopes would leave its lock behind, and use a file closed under it.
  // No open starts once the log is closing (`open` looks).
  const writersScope = yield* Scope.fork(layerScope)
  yield* Scope.addFinalizer(layerScope, opening.withPermit(Effect.void))
  let inFlight = 0
  // The session of the last batch started, when that was, and how many batches in a row it started.
  let lastSession: SessionId.SessionId | undefined
  let lastStarted = Number.NEGATIVE_INFINITY
  let inARow = 0

  /**
   * A writer whose batches a journal may hold past this process (a failed batch that may be replayed,
   * or a sync of its file that failed) keeps its lock while the log is open, then hands it to `heldBack`.
   */
  const holdsBack = (writer: Writer.Writer) => writer.replayable || journal?.unsynced(writer.file) === true

  /**
   * A writer closing (the log closes, or it was idle) refuses batches from now on, and waits for the
   * ones in flight: their fsync, or a cut after a failure, must not reach a descriptor closed under
   * them, which the process may already have reused for another file.
   */
  const drainedBeforeClose = (entry: Held) =>
    Effect.suspend(() => {
      entry.writer.lost ??= new OwnershipLost({ path: entry.writer.path, detail: "its writer was closed (the log closed, or it was idle): its lock is released" })
      if (entry.busy === 0) return Effect.void
      entry.drained ??= Deferred.makeUnsafe<void>()
      return Deferred.await(entry.drained)
    })

  const open = (session: SessionId.SessionId, pinned: boolean) =>
    opening.withPermit(Effect.suspend(() => {
      const existing = held.get(session)
      if (existing !== undefined) return Effect.succeed(existing)
      return Effect.gen(function*() {
        if (layerScope.state._tag === "Closed") return yield* Effect.fail(new StorageFailure({ detail: "the log is closed" }))
        const scope = yield* Scope.fork(writersScope)
        // The lock lives in a scope of its own, closed last as the writer closes, unless held back.
        const lockScope = yield* Scope.make()
        let opened: { readonly writer: Writer.Writer; readonly lock: Lock.Held } | undefined
        yield* Scope.addFinalizer(scope, Effect.suspend(() => {
          if (opened === undefined || !holdsBack(opened.writer)) return Scope.close(lockScope, Exit.void)
          options.heldBack.locks.push({ lock: opened.lock, scope: lockScope })
          return Effect.void
        }))
        const writer = yield* Effect.gen(function*() {
          const lock = yield* Lock.acquire(fs, path.join(directory, Format.lockName(session)), options.self).pipe(Scope.provide(lockScope))
          // A process that died holding this session may have left acknowledged appends in its journal.
          yield* Recovery.recoverSession(fs, path, directory, session)
          const file = path.join(directory, Format.fileName(session))
          const writer = yield* Writer.open(fs, directory, file, session, lock, options.maxLineBytes)
          // Closing: what the journal holds for this file becomes durable in the file itself.
          if (journal !== undefined) yield* Effect.addFinalizer(() => journal.release(writer.file))
          opened = { writer, lock }
          return writer
        }).pipe(Scope.provide(scope), Effect.onError(() => Scope.close(scope, Exit.void)))
        const entry: Held = { writer, scope, busy: 0, drained: undefined, lastUsed: yield* Clock.currentTimeMillis, pinned }
        // Added last, so it runs first: the file closes only once no batch is using it.
        yield* Scope.addFinalizer(scope, drainedBeforeClose(entry))
        held.set(session, entry)
        return entry
      })
    }))

  // Closed under the same permit as opening, so a session is never reopened while its old lock is
  // still being released.
  const sweep = opening.withPermit(Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    for (const [session, entry] of held) {
      // A stopped writer, or one whose batches may be replayed from the journal, keeps its lock.
      const idle = entry.busy === 0 && !entry.pinned && entry.writer.lost === undefined && !holdsBack(entry.writer) &&
        now - entry.lastUsed >= Duration.toMillis(options.idle)
      if (!idle) continue
      held.delete(session)
      yield* Scope.close(entry.scope, Exit.void)
    }
  }))
  yield* sweep.pipe(Effect.delay(Duration.divideUnsafe(options.idle, 2)), Effect.forever, Effect.forkIn(layerScope))

  return {
    /** The writer this process holds for the session, if any. */
    get: (session: SessionId.SessionId): Writer.Writer | undefined => held.get(session)?.writer,
    /** Opens the session now and holds it until the log closes. */
    pin: (session: SessionId.SessionId) => Effect.asVoid(open(session, true)),
    /**
     * Runs `f` with the session's writer for a batch that is alone, at once, if the writer is open
     * and the batch alone: what `f` answers, or `undefined` if it can't (`f` may answer that too).
     */
    now: <A>(session: SessionId.SessionId, f: (writer: Writer.Writer) => A | undefined): A | undefined => {
      const entry = held.get(session)
      if (entry === undefined || inFlight !== 0) return undefined
      const now = clock.currentTimeMillisUnsafe()
      const row = lastSession === session ? inARow + 1 : 1
      if (now - lastStarted < contentionWindowMs && row <= aloneAfterBatches) return undefined
      // Nothing runs beside `f` (it blocks the thread): the writer can't be closed under it.
      const result = f(entry.writer)
      if (result === undefined) return undefined
      inARow = row
      lastSession = session
      lastStarted = now
      entry.lastUsed = clock.currentTimeMillisUnsafe()
      return result
    },
    /** Runs `f` with the session's writer, opening it if need be; the writer stays open while `f` runs. */
    use: <A, E>(session: SessionId.SessionId, f: (writer: Writer.Writer) => Effect.Effect<A, E>) => {
      const run = (entry: Held) => {
        // Marked busy before anything can yield, so the sweeper never closes it under `f`.
        entry.busy++
        inFlight++
        inARow = lastSession === session ? inARow + 1 : 1
        lastSession = session
        lastStarted = clock.currentTimeMillisUnsafe()
        return Effect.ensuring(
          f(entry.writer),
          Effect.sync(() => {
            inFlight--
            if (--entry.busy === 0 && entry.drained !== undefined) Deferred.doneUnsafe(entry.drained, Exit.void)
            entry.lastUsed = clock.currentTimeMillisUnsafe()
          })
        )
      }
      return Effect.suspend(() => {
        const existing = held.get(session)
        return existing === undefined ? Effect.flatMap(open(session, false), run) : run(existing)
      })
    }
  }
})
