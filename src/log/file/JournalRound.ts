/**
 * The journal's committer through its I/O thread (`IoThread`): each batch handed to the thread as
 * its writer hands it over; each round, the batches handed over up to its last committed, each
 * answered with what the thread found, and the journal's state brought up to date: grown by what it
 * stored, or, after a failed write or sync, cut back.
 *
 * Answering a round resumes its appenders at once, and each makes its next append before the next
 * is resumed: left to the committer, the next round would take them all, and its sync would leave
 * the event loop's thread idle. So the next round is posted while the answers are given out (`postAt`),
 * and the two alternate: one syncs while the other's appends are made (3–12% less wall time per
 * append at 128 sessions, 18% at 64, on a 2-vCPU VM's disk; see the bench README, stop 31).
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as FileSystem from "effect/FileSystem"
import * as Option from "effect/Option"
import type * as PlatformError from "effect/PlatformError"
import type * as StorageFailures from "../internal/storageFailure.ts"
import { StorageFailure } from "../SessionLogError.ts"
import * as BlockingIo from "./BlockingIo.ts"
import * as IoCalls from "./IoCalls.ts"
import type * as IoThread from "./IoThread.ts"
import * as Journal from "./Journal.ts"
import * as JournalFile from "./JournalFile.ts"
import type * as JournalStore from "./JournalStore.ts"

/** What a journal commit fails with. */
export type Failure = PlatformError.PlatformError | StorageFailure | StorageFailures.Worded

/** A batch of the round, and how its append is answered. */
export interface Chunk {
  /** In the order batches are handed over. */
  readonly id: number
  readonly session: string
  readonly file: FileSystem.File
  readonly offset: number
  readonly bytes: Uint8Array
  readonly write: IoCalls.Write | undefined
  readonly done: (exit: Exit.Exit<IoCalls.Answer, Failure>) => void
}

/** What the round reads and changes of the committer's state: the store's (never busy for it), and more. */
export interface State extends Omit<JournalStore.State<Chunk>, "busy"> {
  /** How many batches wait for the next round. */
  readonly waiting: () => number
  /** Takes the batches waiting, for a round posted early; none where none may be (upkeep due, a broken journal, the log closing). */
  readonly takeWaiting: () => ReadonlyArray<Chunk>
  /** A monotonic clock, in µs. */
  readonly now: () => number
}

/** The committer's rounds through its I/O thread. */
export interface Rounds {
  /** Commits the batches in the journal current now and answers every one (posting the next round meanwhile). */
  readonly run: (batch: ReadonlyArray<Chunk>) => Effect.Effect<void>
  /** Whether a round was posted early (see `postAt`) and waits for its answer: the committer's next. */
  readonly posted: () => boolean
  /** Waits for the round posted early, if any, and answers it (which may post the next). */
  readonly answerPosted: Effect.Effect<void>
}

/** What the last rounds took, in µs: 0 until measured. */
export interface Pace {
  /** From a commit's post to its answer, as the event loop's thread saw it. */
  commit: number
  /** Per batch answered: its fiber resumed, up to its next append handed over. */
  answer: number
}

/** The fewest batches a commit covers for a round to be posted early (see `postAt`). */
export const minCovered = 16

/**
 * Where, in giving out a round's answers, the next round is best posted (the count of batches
 * answered before it; `undefined`: once all are, as the committer takes them). Each batch answered
 * makes its next append at once, so a round posted early commits while the rest are answered: from
 * when the answers left take about as long as a commit (posted sooner, its sync would be done before
 * the event loop's thread is free to give out its answers; later, the thread waits for it), or at
 * once, for the batches waiting, if the answers can't cover a commit.
 *
 * Two rounds in turn cost a second sync, and a round's messages between the threads, where one round
 * costs one: worth it only while a commit takes less than the answers of every batch (answered and
 * waiting) would, and more than `minCovered` of them. Past the first, the journal's syncs bound the
 * throughput; short of the second, the event loop's thread hardly waits for them.
 *
 * A commit is timed as the event loop's thread sees its answer: late, if the thread was still giving
 * out answers. Placed by three quarters of that time, a post's own lateness can't hold the estimate
 * up: it shrinks back towards the commit's own time.
 */
export const postAt = (answering: number, waiting: number, pace: Pace): number | undefined => {
  if (pace.commit <= 0 || pace.answer <= 0) return undefined
  const covering = Math.floor((0.75 * pace.commit) / pace.answer)
  if (covering < minCovered || covering >= 0.75 * (answering + waiting)) return undefined
  return Math.max(0, answering - covering)
}

/** Where a round's answers post the next round: `postAt`'s placement, given what the rounds took. */
export type Placement = (answering: number, waiting: number, pace: Pace) => number | undefined

/**
 * Where rounds are posted early: `postAt`, unless a test places them so that a close meets rounds
 * posted early every time, which measured times make a matter of chance.
 *
 * @since 0.2.0
 * @category references
 */
export const RoundPlacement = Context.Reference<Placement>("effect-todo-write/file/RoundPlacement", {
  defaultValue: () => postAt
})

/** Hands a batch to the thread, with its journal record's header. */
export const handOver = (thread: IoThread.IoThread, chunk: Chunk): void => {
  thread.write({ id: chunk.id, header: Journal.recordHead(chunk), lines: chunk.bytes, write: chunk.write })
}

/** Rounds through `thread`, over the committer's `state`, posted early where `RoundPlacement` says. */
export const make = (thread: IoThread.IoThread, state: State): Effect.Effect<Rounds> =>
  Effect.map(RoundPlacement, (place): Rounds => {
    const pacing: Pacing = { pace: { commit: 0, answer: 0 }, place, postNext: () => postNext() }
    let next: Effect.Effect<void> | undefined
    // Only to a running thread: in place, a commit would sync on this thread, between the answers.
    const postNext = () => {
      if (next !== undefined || !thread.threaded()) return
      const batch = state.takeWaiting()
      if (batch.length > 0) next = postRound(batch, state.current(), thread, state, pacing)
    }
    return {
      run: (batch) => Effect.suspend(() => postRound(batch, state.current(), thread, state, pacing)),
      posted: () => next !== undefined,
      answerPosted: Effect.suspend(() => {
        const round = next ?? Effect.void
        next = undefined
        return round
      })
    }
  })

/** What places the next round's post: the rounds' times, where to post, and posting it. */
interface Pacing {
  readonly pace: Pace
  readonly place: Placement
  readonly postNext: () => void
}

/** A round's commit posted to the thread now: the effect waits for the answer and gives it out. */
const postRound = (
  batch: ReadonlyArray<Chunk>,
  generation: JournalFile.JournalFile,
  thread: IoThread.IoThread,
  state: State,
  { pace, place, postNext }: Pacing
): Effect.Effect<void> => {
  const answerAll = (exit: Exit.Exit<never, Failure>) => {
    for (const chunk of batch) chunk.done(exit)
  }
  const fd = BlockingIo.descriptorOf(generation.file)
  const broken = state.broken() ??
    (fd === undefined ? new StorageFailure({ detail: `the journal ${generation.path} has no descriptor` }) : undefined)
  // Broken, still committed, with no journal (descriptor -1): the thread lets go of the batches
  // (their writers cut what they wrote).
  const journal = broken === undefined && fd !== undefined ? fd : -1
  const postedAt = state.now()
  return Effect.flatMap(Effect.exit(thread.postUnsafe(batch[batch.length - 1]!.id, journal, generation.size)), (exit) => {
    if (Exit.isFailure(exit)) {
      // The thread stopped mid-commit: whatever it wrote to the journal is cut (and every batch,
      // maybe written to its session file, fails: its writer cuts it). If the journal can't be cut,
      // its records may be durable already: the failure says so rather than that they are undone,
      // even if the thread died of a defect.
      // Sent no journal, the thread wrote none: nothing to cut.
      const cutting = journal < 0 ? Effect.succeed(true) : Effect.map(JournalFile.cutBack(generation), (cut) => {
        state.afterCut(generation, cut)
        return cut
      })
      return Effect.flatMap(cutting, (cut) =>
        Effect.sync(() => {
          if (!cut) return answerAll(Exit.failCause(JournalFile.notCutBackCause(generation)(exit.cause)))
          const why = Option.getOrUndefined(Exit.findErrorOption(exit))
          answerAll(
            why === undefined ? Exit.failCause(exit.cause) : Exit.fail(
              new StorageFailure({
                kind: why.kind,
                detail: `${why.detail}; ${journal < 0 ? "it wrote nothing to the journal" : "what it wrote to the journal is undone"}`
              })
            )
          )
        }))
    }
    const response = exit.value
    return Effect.sync(() => {
      const outcomes = new Map(response.ids.map((id, i) => [id, response.outcomes[i]!]))
      const journalFailed = response.journal === undefined ? undefined : IoCalls.toPlatformError(response.journal.fault, generation.path)
      const failed = broken ?? (journalFailed === undefined || response.journal?.cut ? journalFailed : JournalFile.notCutBack(generation)(journalFailed))
      if (response.journal !== undefined && broken === undefined) state.afterCut(generation, response.journal.cut)
      else if (broken === undefined) state.stored(generation, batch.filter((chunk) => outcomes.get(chunk.id)?._tag === "Durable"), response.stored)
      const stopped = new StorageFailure({ detail: "the journal's I/O thread stopped holding this batch: it never reached the journal" })
      const answering = state.now()
      const commit = answering - postedAt
      const at = place(batch.length, state.waiting(), pace)
      for (let i = 0; i < batch.length; i++) {
        if (i === at) postNext()
        const chunk = batch[i]!
        const outcome = outcomes.get(chunk.id)
        chunk.done(
          outcome === undefined
            ? Exit.fail(stopped)
            : outcome._tag === "NotDurable" || (failed !== undefined && outcome._tag === "Durable")
            ? Exit.fail(failed ?? stopped)
            : Exit.succeed(outcome)
        )
      }
      // Averaged with the last, against the noise of one round.
      pace.commit = pace.commit > 0 ? (pace.commit + commit) / 2 : commit
      const answer = (state.now() - answering) / batch.length
      pace.answer = pace.answer > 0 ? (pace.answer + answer) / 2 : answer
    })
  })
}
