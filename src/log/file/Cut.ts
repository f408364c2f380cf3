/**
 * A failed batch cut from its session file, so that the file ends where its durable lines do; if it
 * can't be cut, the writer stops (`uncut`). In journal mode the cut's sync is one of the syncs the
 * journals rely on (see `Coverage`): its failure may have taken the report of another batch's lost
 * write-back, so it keeps every journal holding the file's batches.
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as StorageFailures from "../internal/storageFailure.ts"
import { OwnershipLost } from "../SessionLogError.ts"
import type * as BlockingIo from "./BlockingIo.ts"
import type * as JournalCommitter from "./JournalCommitter.ts"
import type * as Scanner from "./Scanner.ts"
import type * as Writer from "./Writer.ts"

/**
 * A failed batch that could not be cut. Where the file ends is unknown now: appending after bytes that
 * may hold it would repeat its seqs. The writer stops; reads and the next open keep its whole lines,
 * so the append fails as the storage failure it was (its kind kept), saying they may appear.
 */
const uncut = (writer: Writer.Writer, failure: unknown, cutFailure: unknown): StorageFailures.Worded => {
  writer.lost = new OwnershipLost({ path: writer.path, detail: "a failed write could not be cut from the file; reopening the log repairs it" })
  return StorageFailures.maybeStored(
    failure,
    `; the failed batch could not be removed from ${writer.path} (${StorageFailures.describe(cutFailure)}), so some or all of it may appear when the session is read; this writer stops until the log is reopened`
  )
}

/** Not durable: the batch is cut from the session file (see `Writer.append`), with blocking calls; answers what it fails with. */
export const blocking = (
  writer: Writer.Writer,
  fd: number,
  start: Scanner.Position,
  calls: BlockingIo.Blocking,
  failed: Writer.Failure,
  journal: JournalCommitter.Committer | undefined
): Writer.Failure => {
  writer.replayable ||= StorageFailures.isMaybeStored(failed)
  const truncated = calls.truncate(fd, writer.path, start.offset)
  const cutFailure = truncated ?? calls.sync(fd, writer.path)
  // In journal mode, a failed sync may have taken the report of another batch's lost write-back.
  if (truncated === undefined && cutFailure !== undefined) journal?.syncFailed(writer.file, cutFailure.message)
  return cutFailure === undefined ? failed : uncut(writer, failed, cutFailure)
}

/**
 * Not durable: the batch is cut from the session file through `FileSystem`, then fails; if it can't be
 * cut, see `uncut`. In journal mode the cut's sync is the journal's (see `Coverage`).
 */
export const thenFail = <E>(
  writer: Writer.Writer,
  start: Scanner.Position,
  cause: Cause.Cause<E>,
  journal: JournalCommitter.Committer | undefined
): Effect.Effect<never, E | StorageFailures.Worded> =>
  Effect.suspend(() => {
    writer.replayable ||= StorageFailures.isMaybeStored(Cause.squash(cause))
    const synced = journal === undefined ? writer.file.sync : journal.sync(writer.file)
    return Effect.flatMap(Effect.exit(Effect.andThen(writer.file.truncate(start.offset), synced)), (cut): Effect.Effect<never, E | StorageFailures.Worded> =>
      Exit.isFailure(cut) ? Effect.fail(uncut(writer, Cause.squash(cause), Cause.squash(cut.cause))) : Effect.failCause(cause))
  })

