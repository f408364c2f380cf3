/**
 * This log instance's write-ahead journal, in journal mode: a committer fiber takes every batch that
 * session writers hand it, writes them with one write and makes them durable with one fsync, then
 * answers them all; with Node's file system, through its I/O thread, which also writes them to their
 * session files (`IoThread`, `JournalRound`). A lone batch, arriving while the committer is idle, is
 * written and synced by its own caller instead, with blocking calls (`commitBlocking`). Once a
 * journal holds `checkpointBytes`, a new one takes over (opened by the committer), and in the
 * background the session files the old one covers are fsynced and the old one is removed: no append
 * waits for that. (Batches handed to the committer while it opens the next journal wait for it.)
 * With an I/O thread, the next round may be posted while one answers (`JournalRound.postAt`): the
 * journal stays busy, and upkeep waits, till it is answered. When the log closes, batches handed over
 * during the committer's last round (and any round posted early) are stored and answered, later ones refused.
 *
 * A journal is written ahead with zeros (`JournalFile.firstAhead` when it is opened, then
 * `aheadChunk` more, in pieces, by the committer, each time its records come within `aheadMargin` of the
 * zeros' end, up to its checkpoint size), and batches overwrite them in place: a lone batch's
 * commit is then an fdatasync that flushes its data alone, with no file-system journal commit for a
 * file that grew or whose times changed. That is what makes its commit cheaper than a bare append + fsync of a session file
 * (SQLite's WAL does the same by reusing its file).
 *
 * One writer of the journal at a time: the committer's writes (a store, zeros written ahead) may
 * yield while their calls go through the thread pool, so it marks the journal busy meanwhile; a
 * blocking commit runs start to end without yielding, so nothing interleaves with it, and it only
 * runs while not busy. Zeros written ahead keep the journal busy until they are synced (they are
 * written in pieces, the event loop free between them); while the next journal is opened, lone
 * batches go on committing themselves, in the journal they find current. A journal in use is synced
 * only by its one writer (a commit, the cut after a failed one, the zeros' sync): never by two at once.
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as FileSystem from "effect/FileSystem"
import type * as Path from "effect/Path"
import type * as PlatformError from "effect/PlatformError"
import * as Queue from "effect/Queue"
import * as Scope from "effect/Scope"
import { StorageFailure } from "../SessionLogError.ts"
import * as BlockingIo from "./BlockingIo.ts"
import * as Coverage from "./Coverage.ts"
import type * as IoCalls from "./IoCalls.ts"
import * as IoThread from "./IoThread.ts"
import * as JournalFile from "./JournalFile.ts"
import * as JournalRound from "./JournalRound.ts"
import * as JournalStore from "./JournalStore.ts"
import type * as Owner from "./Owner.ts"

/** What a journal commit fails with. */
export type Error = JournalRound.Failure

type Chunk = JournalRound.Chunk

/** A batch a writer hands over, and the batch its round writes to the session file too. */
type Batch = JournalStore.Batch
type Writing = Batch & { readonly write: IoCalls.Write }

/** The journal as session writers use it. */
export interface Committer {
  /** Makes a batch already written to its session file durable: answers once the journal is synced. */
  readonly commit: (chunk: Batch) => Effect.Effect<void, Error>
  /**
   * With an I/O thread: checks the batch's lock, writes it to its session file, makes it durable and
   * checks the session file, all on the thread, in a round with the others' (see `IoThread`).
   */
  readonly commitWriting: ((chunk: Writing) => Effect.Effect<IoCalls.Answer, Error>) | undefined
  /** Whether `commitBlocking` may run: the committer is not at work, and the journal takes blocking calls. */
  readonly idle: () => boolean
  /**
   * The same for a lone batch, at once, on the calling thread with blocking calls, while `idle`:
   * `undefined` once the journal is synced, or the failure.
   */
  readonly commitBlocking: (chunk: Batch, blocking: BlockingIo.Blocking) => Error | undefined
  /** A writer closing: its file's journaled batches become durable in the file itself. */
  readonly release: (file: FileSystem.File) => Effect.Effect<void>
  /** Once the log has closed: whether one of its journals stays on disk (for recovery, or not removable). */
  readonly kept: () => boolean
  /** Syncs a session file (cutting a failed batch): one at a time with the journals' syncs of it (see `Coverage`). */
  readonly sync: (file: FileSystem.File) => Effect.Effect<void, PlatformError.PlatformError>
  /** A blocking sync of a session file failed: every journal holding its batches stays, for recovery (see `Coverage`). */
  readonly syncFailed: (file: FileSystem.File, why: string) => void
  /** Whether a sync of a session file failed, so that journals holding its batches may stay (see `Coverage`). */
  readonly unsynced: (file: FileSystem.File) => boolean
}

type Generation = JournalFile.JournalFile

/** Starts this instance's journal in `directory`; it lives, and is closed, with `scope`. */
export const make = Effect.fnUntraced(function*(
  fs: FileSystem.FileSystem,
  path: Path.Path,
  directory: string,
  scope: Scope.Scope,
  self: Owner.Owner,
  options: {
    readonly checkpointBytes: number
    /** How the committer writes and syncs the journal. */
    readonly io: BlockingIo.Io
    /** Rounds make their system calls on a thread of their own (Node's file system only), or with these calls. */
    readonly thread?: boolean
  }
) {
  const clock = yield* Clock.Clock
  const generations = new Set<Generation>()
  // The journals' files close last, after the committer has stopped (its round finished) and the
  // journals with nothing left to cover are removed: a file never closes under a round in flight.
  const files = yield* Scope.fork(scope)

  const openGeneration = Effect.tap(
    JournalFile.open(fs, path, directory, self, files, Math.min(options.checkpointBytes, JournalFile.firstAhead)),
    (generation) => Effect.sync(() => generations.add(generation))
  )
  const coverage = yield* Coverage.make(generations)
  const retire = (generation: Generation) =>
    // Each file still covered once its turn to sync comes: one released meanwhile may be closed.
    JournalFile.retire(fs, directory, generation, () => generations.delete(generation), (f) =>
      coverage.sync(f, () => generation.dirty.has(f)))

  let current = yield* openGeneration
  let broken: StorageFailure | undefined
  let closing = false
  // Batches to commit, and requests for upkeep (zeros written ahead, a checkpoint) from blocking commits.
  const queue = yield* Queue.unbounded<Chunk | "upkeep">()
  // The chunks queued, taken now; a request for upkeep among them needs no more: upkeep follows every round.
  const takeChunks = (): ReadonlyArray<Chunk> => {
    const chunks: Array<Chunk> = []
    for (let item = Queue.takeUnsafe(queue); item !== undefined && Exit.isSuccess(item); item = Queue.takeUnsafe(queue)) if (item.value !== "upkeep") chunks.push(item.value)
    return chunks
  }
  // The committer is writing the journal: a blocking commit must not write meanwhile.
  let busy = false
  // Upkeep is asked for or under way: lone batches don't ask again until it is done.
  let upkeepRequested = false

  /** After records are durable in a generation: it has grown, and covers their session files. */
  const stored = (generation: Generation, batch: ReadonlyArray<Batch>, bytes: number) => {
    generation.size += bytes
    coverage.stored(generation, batch)
  }

  const checkpointDue = (generation: Generation) => generation.size >= options.checkpointBytes
  const aheadDue = (generation: Generation) =>
    generation.size + JournalFile.aheadMargin > generation.ahead && generation.ahead < options.checkpointBytes

  const posted = (): boolean => rounds?.posted() === true
  /** Runs `write` as the journal's one writer: no blocking commit interleaves with it, nor after it while a round is posted early. */
  const writing = <A, E>(write: Effect.Effect<A, E>): Effect.Effect<A, E> =>
    Effect.suspend(() => {
      busy = true
      return write
    }).pipe(Effect.ensuring(Effect.sync(() => {
      busy = posted()
    })))

  /**
   * Once the journal holds `checkpointBytes`, a new one takes over and the old one retires; before
   * that, once its records near the end of the zeros written ahead, more are written and synced. Only
   * the zeros make the journal busy (see the module's comment).
   */
  const upkeep = Effect.suspend(() => {
    // Never beside a round in flight: upkeep follows its answer.
    if (posted()) return Effect.void
    const generation = current
    if (checkpointDue(generation)) {
      return Effect.flatMap(Effect.exit(openGeneration), (next) => {
        if (next._tag === "Failure") {
          return Effect.logWarning(`SessionLogFile: no new journal, checkpoint postponed: ${Cause.pretty(next.cause)}`)
        }
        current = next.value
        return Effect.asVoid(Effect.forkIn(retire(generation), scope))
      })
    }
    if (!aheadDue(generation)) return Effect.void
    const writeAt = (bytes: Uint8Array, at: number) => options.io.writeAt(generation.file, generation.path, bytes, at)
    // As the journal's one writer throughout, its sync included: a sync beside a lone batch's, on the
    // same descriptor, could take the report of a failed write-back of that batch's record (Linux
    // reports it to one sync), and the batch be acknowledged. Lone batches meanwhile go to the committer.
    return writing(Effect.suspend(() => {
      // From where the records end, if a batch went past the zeros: never over a record.
      const from = Math.max(generation.ahead, generation.size)
      const to = Math.min(from + JournalFile.aheadChunk, options.checkpointBytes)
      return Effect.andThen(JournalFile.writeAhead(from, to, writeAt), options.io.sync(generation.file, generation.path)).pipe(
        Effect.map(() => void (generation.ahead = to))
      )
    })).pipe(
      // Batches past the zeros grow the file instead: as durable, only slower to sync.
      Effect.catch((error) => Effect.logWarning(`SessionLogFile: ${generation.path} not written ahead: ${error.message}`))
    )
  }).pipe(Effect.ensuring(Effect.sync(() => {
    upkeepRequested = false
  })))

  /**
   * After a failed batch was cut from a generation (`cut`: whether that worked): the zeros past its
   * records are gone too; if it couldn't be cut, later batches would follow bytes that end the
   * journal's valid part, so the journal takes none.
   */
  const afterCut = (generation: Generation, cut: boolean) => {
    generation.ahead = generation.size
    generation.cuts++
    if (!cut) broken = new StorageFailure({ detail: `the journal ${generation.path} can't be repaired after a failed write` })
  }

  const storing: JournalStore.State = { current: () => current, busy: () => busy, broken: () => broken, afterCut, stored }
  const idle = () => !busy && BlockingIo.descriptorOf(current.file) !== undefined
  /** A lone batch's commit, at once; then, if due, upkeep asked of the committer. */
  const storeBlocking = (chunk: Batch, blocking: BlockingIo.Blocking): Error | undefined => {
    const failed = JournalStore.storeBlocking(storing, chunk, blocking)
    // Opening the next journal, or writing more zeros ahead, takes calls through the thread pool:
    // the committer's job, after this batch is acknowledged (it is durable in this journal).
    if (failed === undefined && !upkeepRequested && (checkpointDue(current) || aheadDue(current))) {
      upkeepRequested = true
      Queue.offerUnsafe(queue, "upkeep")
    }
    return failed
  }

  const threaded = options.thread === true && BlockingIo.descriptorOf(current.file) !== undefined
  const thread = threaded ? yield* IoThread.make(scope) : undefined
  const durable: Exit.Exit<IoCalls.Answer> = Exit.succeed({ _tag: "Durable", found: undefined, fault: undefined })
  const rounds = thread === undefined ? undefined : yield* JournalRound.make(thread, {
    ...storing,
    waiting: () => Queue.sizeUnsafe(queue),
    // Not beside upkeep due now: its writes and sync are the journal's one writer's.
    takeWaiting: () => closing || broken !== undefined || checkpointDue(current) || aheadDue(current) ? [] : takeChunks(),
    now: () => Number(clock.monotonicTimeNanosUnsafe()) / 1000
  })
  /** Stores chunks together and answers each: resumes its fiber. */
  const answer = (batch: ReadonlyArray<Chunk>) =>
    rounds !== undefined
      ? writing(rounds.run(batch))
      : Effect.flatMap(Effect.exit(writing(JournalStore.store(storing, batch, options.io))), (exit) =>
        Effect.sync(() => {
          for (const chunk of batch) chunk.done(Exit.isSuccess(exit) ? durable : Exit.failCause(exit.cause))
        }))

  /**
   * One round of the committer: the batches that gathered, stored together and answered, then upkeep
   * if due. Uninterruptible: closing the log waits for a round in flight, whose callers wait too.
   */
  const round = (items: ReadonlyArray<Chunk | "upkeep">) =>
    Effect.suspend(() => {
      const batch = items.filter((item): item is Chunk => item !== "upkeep")
      if (batch.length === 0) return upkeep
      return Effect.andThen(answer(batch), upkeep)
    }).pipe(Effect.uninterruptible)
  // The round posted early, answered (which may post the next), then upkeep if due.
  const answerPosted = rounds === undefined ? Effect.void : writing(rounds.answerPosted)
  const postedRound = Effect.andThen(answerPosted, upkeep)

  let handed = 0
  // The appending fiber waits for the round that stores its chunk: no Deferred, no effect to offer.
  const handOver = (chunk: Batch, write: IoCalls.Write | undefined) =>
    Effect.callback<IoCalls.Answer, Error>((resume) => {
      const item: Chunk = { ...chunk, id: handed++, write, done: resume }
      if (!Queue.offerUnsafe(queue, item)) {
        return resume(Effect.fail(new StorageFailure({ detail: `the journal in ${directory} is closed: the log was closed` })))
      }
      // Only once queued: a batch refused is never written.
      if (thread !== undefined) JournalRound.handOver(thread, item)
    })

  // On close, after every writer has synced its file, journals with nothing left to cover go.
  let kept = false
  yield* Scope.addFinalizer(scope, Effect.suspend(() => JournalFile.removeCovered(fs, directory, [...generations])).pipe(
    Effect.map((none) => void (kept = !none))
  ))
  // Closing, once the committer has stopped (this runs after it is interrupted, before the above):
  // a round posted early (none, unless the committer died of a defect) and chunks offered during its
  // last round are stored and answered, later ones refused: no append waits for a committer gone.
  yield* Scope.addFinalizer(scope, Effect.flatMap(Effect.andThen(answerPosted, Queue.clear(queue)), (left) => {
    Queue.shutdownUnsafe(queue)
    const batch = left.filter((item): item is Chunk => item !== "upkeep")
    return batch.length === 0 ? Effect.void : answer(batch)
  }))
  // Interruptible only while it waits for chunks, which it never does with a round posted early: once
  // it has taken some, their round runs, and the one it posts (else they'd go unanswered).
  yield* Effect.uninterruptibleMask((restore) =>
    Effect.forever(Effect.suspend(() => posted() ? postedRound : Effect.flatMap(restore(Queue.takeAll(queue)), round)))
  ).pipe(Effect.forkIn(scope))
  // First of the committer's as the log closes: no round is posted early any more, so that it comes to wait, and stops.
  yield* Scope.addFinalizer(scope, Effect.sync(() => void (closing = true)))

  return {
    commit: (chunk) => Effect.asVoid(handOver(chunk, undefined)),
    commitWriting: thread === undefined ? undefined : (chunk) => handOver(chunk, chunk.write),
    idle,
    commitBlocking: storeBlocking,
    // Its file closes next: if it can't be synced, the journals covering it stay (see `JournalFile.unsyncable`).
    release: (f) => Effect.ignore(Effect.andThen(coverage.sync(f), Effect.sync(() => generations.forEach((generation) => generation.dirty.delete(f))))),
    sync: coverage.sync,
    syncFailed: coverage.failed,
    unsynced: coverage.unsynced,
    kept: () => kept
  } satisfies Committer
})
