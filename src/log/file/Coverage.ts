/**
 * Which of a log's journals cover which session files, and what a failed sync of one of those files
 * means. A journal may go only once every session file it covers is synced. But Linux reports a
 * failed write-back of a file's pages to ONE sync of its descriptor (errseq): a later sync succeeds
 * though those pages never reached the disk. So once a sync of a session file fails (a checkpoint's,
 * a closing writer's, or the one that cuts a failed batch), no journal holding a batch written to it
 * before then may go: neither those covering it now nor one that a batch handed over before then is
 * stored in later (its round was in flight). Syncs of covered files run one at a time, so that none
 * takes another's report.
 */
import * as Effect from "effect/Effect"
import type * as FileSystem from "effect/FileSystem"
import type * as PlatformError from "effect/PlatformError"
import * as Semaphore from "effect/Semaphore"
import type * as JournalFile from "./JournalFile.ts"

/** A batch stored in a journal: its session file, and, if it was handed over, its place in that order. */
export interface Stored {
  readonly file: FileSystem.File
  readonly id?: number | undefined
}

export interface Coverage {
  /** Syncs a session file the journals cover; if that fails, see `failed`. */
  readonly sync: (file: FileSystem.File) => Effect.Effect<void, PlatformError.PlatformError>
  /** A sync (or a cut) of `file` failed: every journal holding a batch written to it so far stays, for recovery. */
  readonly failed: (file: FileSystem.File, why: string) => void
  /** Batches are durable in `generation`: it covers their files (and stays, if a failed sync may have taken their report). */
  readonly stored: (generation: JournalFile.JournalFile, batches: ReadonlyArray<Stored>) => void
}

/** Coverage over a log's journals (`generations`); `handed`: how many batches were handed over so far. */
export const make = (generations: ReadonlySet<JournalFile.JournalFile>, handed: () => number): Effect.Effect<Coverage> =>
  Effect.map(Semaphore.make(1), (syncing) => {
    // Per file whose sync failed: the batches handed over before then, and why.
    const failures = new WeakMap<FileSystem.File, { readonly before: number; readonly why: string }>()
    const failed = (file: FileSystem.File, why: string) => {
      const unsyncable = `a session file it covers could not be synced (${why})`
      failures.set(file, { before: handed(), why: unsyncable })
      for (const generation of generations) if (generation.dirty.has(file)) generation.unsyncable ??= unsyncable
    }
    return {
      sync: (file) => syncing.withPermit(Effect.tapError(file.sync, (error) => Effect.sync(() => failed(file, error.message)))),
      failed,
      stored: (generation, batches) => {
        for (const batch of batches) {
          generation.dirty.add(batch.file)
          const failure = failures.get(batch.file)
          if (failure !== undefined && batch.id !== undefined && batch.id < failure.before) generation.unsyncable ??= failure.why
        }
      }
    }
  })
