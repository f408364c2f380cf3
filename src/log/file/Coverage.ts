/**
 * Which of a log's journals cover which session files, and what a failed sync of one of those files
 * means. A journal may go only once every session file it covers is synced. But Linux reports a
 * failed write-back of a file's pages to ONE sync of its descriptor (errseq): a later sync succeeds
 * though those pages never reached the disk. So once a sync of a session file fails (a checkpoint's,
 * a closing writer's, or the one that cuts a failed batch), no journal holding a batch written to it
 * before then may go: neither those covering it now nor the one its batch in flight then (written,
 * not yet stored: a session has one at a time) is stored in. Syncs of covered files run one at a
 * time, so that none takes another's report.
 */
import * as Effect from "effect/Effect"
import type * as FileSystem from "effect/FileSystem"
import type * as PlatformError from "effect/PlatformError"
import * as Semaphore from "effect/Semaphore"
import type * as JournalFile from "./JournalFile.ts"

export interface Coverage {
  /**
   * Syncs a session file the journals cover, unless `still` answers no once its turn comes (a file
   * released meanwhile by its closing writer, which synced it, may be closed, its descriptor reused);
   * if that fails, see `failed`.
   */
  readonly sync: (file: FileSystem.File, still?: () => boolean) => Effect.Effect<void, PlatformError.PlatformError>
  /** A sync (or a cut) of `file` failed: every journal holding a batch written to it so far stays, for recovery. */
  readonly failed: (file: FileSystem.File, why: string) => void
  /**
   * Whether a sync of `file` failed: a journal holding its batches may stay, to be replayed after this
   * process is gone, so its writer keeps the session's lock till then (see `Writers.HeldBack`).
   */
  readonly unsynced: (file: FileSystem.File) => boolean
  /** Batches are durable in `generation`: it covers their files (and stays, if a failed sync may have taken their report). */
  readonly stored: (generation: JournalFile.JournalFile, batches: ReadonlyArray<{ readonly file: FileSystem.File }>) => void
}

/** Coverage over a log's journals (`generations`). */
export const make = (generations: ReadonlySet<JournalFile.JournalFile>): Effect.Effect<Coverage> =>
  Effect.map(Semaphore.make(1), (syncing) => {
    // Files whose sync failed, until their next batch is stored: the one in flight then, if any
    // (one written after it goes the same way: its journal stays too, which is only cautious).
    const failures = new WeakMap<FileSystem.File, string>()
    const everFailed = new WeakSet<FileSystem.File>()
    const failed = (file: FileSystem.File, why: string) => {
      const unsyncable = `a session file it covers could not be synced (${why})`
      failures.set(file, unsyncable)
      everFailed.add(file)
      for (const generation of generations) if (generation.dirty.has(file)) generation.unsyncable ??= unsyncable
    }
    return {
      // A sync, once begun, runs to its answer, which is heard: interrupted (the log closing during a
      // checkpoint), it would still run in the thread pool and take a report no one records.
      sync: (file, still) =>
        syncing.withPermit(Effect.suspend(() =>
          still !== undefined && !still()
            ? Effect.void
            : Effect.uninterruptible(Effect.tapError(file.sync, (error) => Effect.sync(() => failed(file, error.message))))
        )),
      failed,
      unsynced: (file) => everFailed.has(file),
      stored: (generation, batches) => {
        for (const { file } of batches) {
          generation.dirty.add(file)
          const failure = failures.get(file)
          if (failure === undefined) continue
          generation.unsyncable ??= failure
          failures.delete(file)
        }
      }
    }
  })
