/**
 * The journal's committer through its I/O thread (`IoThread`): each batch handed to the thread as
 * its writer hands it over; each round, the batches handed over up to its last committed, each
 * answered with what the thread found, and the journal's state brought up to date: grown by what it
 * stored, or, after a failed write or sync, cut back.
 */
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

/** What the round reads and changes of the committer's state. */
export interface State {
  /** Why the journal takes no batches, if it doesn't. */
  readonly broken: () => StorageFailure | undefined
  /** After a failed round was cut from the journal (`cut`: whether that worked). */
  readonly afterCut: (generation: JournalFile.JournalFile, cut: boolean) => void
  /** After the round's records are durable: the journal grew by `bytes`, and covers their files. */
  readonly stored: (generation: JournalFile.JournalFile, batch: ReadonlyArray<Chunk>, bytes: number) => void
}

/** Hands a batch to the thread, with its journal record's header. */
export const handOver = (thread: IoThread.IoThread, chunk: Chunk): void => {
  thread.write({ id: chunk.id, header: Journal.recordHead(chunk), lines: chunk.bytes, write: chunk.write })
}

/** Commits a round in `generation` through `thread` and answers every chunk of it. */
export const run = (
  batch: ReadonlyArray<Chunk>,
  generation: JournalFile.JournalFile,
  thread: IoThread.IoThread,
  state: State
): Effect.Effect<void> =>
  Effect.suspend(() => {
    const answerAll = (exit: Exit.Exit<never, Failure>) => {
      for (const chunk of batch) chunk.done(exit)
    }
    const fd = BlockingIo.descriptorOf(generation.file)
    const broken = state.broken() ??
      (fd === undefined ? new StorageFailure({ detail: `the journal ${generation.path} has no descriptor` }) : undefined)
    // Broken, still committed, with no journal (descriptor -1): the thread lets go of the batches
    // (their writers cut what they wrote).
    const journal = broken === undefined && fd !== undefined ? fd : -1
    return Effect.flatMap(Effect.exit(thread.commit(batch[batch.length - 1]!.id, journal, generation.size)), (exit) => {
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
        for (const chunk of batch) {
          const outcome = outcomes.get(chunk.id)
          chunk.done(
            outcome === undefined
              ? Exit.fail(stopped)
              : outcome._tag === "NotDurable" || (failed !== undefined && outcome._tag === "Durable")
              ? Exit.fail(failed ?? stopped)
              : Exit.succeed(outcome)
          )
        }
      })
    })
  })
