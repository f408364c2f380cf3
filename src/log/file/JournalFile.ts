/**
 * One file of a log instance's journal (a generation): created exclusively under a new name, with
 * its header and zeros written ahead and synced, and its directory entry synced; what it holds (where
 * its records end, where the zeros end, the session files its records cover); retired once those
 * files are synced. `JournalCommitter` decides when each is written, opened and retired.
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as FileSystem from "effect/FileSystem"
import type * as Path from "effect/Path"
import type * as PlatformError from "effect/PlatformError"
import * as Scope from "effect/Scope"
import * as StorageFailures from "../internal/storageFailure.ts"
import * as Journal from "./Journal.ts"
import type * as Owner from "./Owner.ts"
import * as RegularFile from "./RegularFile.ts"

/** Zeros written ahead when a journal is opened: little, since the open waits for them. */
export const firstAhead = 256 * 1024
/** Zeros the committer adds once the records come within `aheadMargin` of where they end. */
export const aheadChunk = 1024 * 1024
export const aheadMargin = 128 * 1024
/**
 * The committer writes those zeros this much at a time, letting the event loop turn between pieces: a
 * megabyte at once held it ~0.2 ms, and up to 4 ms while the kernel wrote back dirty pages.
 */
export const aheadPiece = 64 * 1024

/** A journal file and what it holds. */
export interface JournalFile {
  readonly path: string
  readonly file: FileSystem.File
  /** Where its records end: the next batch goes there, over the zeros written ahead. */
  size: number
  /** Where the zeros written ahead end: past it, a batch grows the file. */
  ahead: number
  /** How many failed batches were cut from it (each takes the zeros after it too). */
  cuts: number
  /** The session files with batches in this journal: synced before it may go. */
  readonly dirty: Set<FileSystem.File>
  /**
   * Why one of them failed to sync (after a failed write-back, what it held may never reach the disk,
   * and its writer may close it): the journal then stays, for recovery to replay, and none of them is
   * synced for it again.
   */
  unsyncable: string | undefined
  readonly scope: Scope.Closeable
}

/**
 * Cuts a failed round's bytes from `generation`, back to where its records end (the zeros written
 * ahead go too), and syncs it: answers whether that worked. If not, what the round wrote may stay,
 * durable, and be replayed after a crash.
 */
export const cutBack = (generation: JournalFile): Effect.Effect<boolean> =>
  Effect.map(Effect.exit(Effect.andThen(generation.file.truncate(generation.size), generation.file.sync)), Exit.isSuccess)

/** What a failed round fails with once `generation` could not be cut back: its records may stay there, durable. */
export const notCutBack = (generation: JournalFile) => (failure: unknown): StorageFailures.Worded =>
  StorageFailures.maybeStored(
    failure,
    `, and the journal ${generation.path} could not be cut back: this batch may still be replayed after a crash (the journal takes no more batches)`
  )

/**
 * `notCutBack` for a round that ended in `cause`: its failures; a defect or an interruption alone
 * (nothing it failed with to add to) becomes one, since the batch may be replayed all the same.
 */
export const notCutBackCause = (generation: JournalFile) => <E>(cause: Cause.Cause<E>): Cause.Cause<StorageFailures.Worded> =>
  Cause.hasFails(cause) ? Cause.map(cause, notCutBack(generation)) : Cause.fail(notCutBack(generation)(Cause.squash(cause)))

/**
 * Writes zeros from `from` to `to`, `aheadPiece` at a time, letting the event loop turn between pieces;
 * the caller is the journal's one writer throughout (see `JournalCommitter`).
 */
export const writeAhead = <E>(
  from: number,
  to: number,
  writeAt: (bytes: Uint8Array, position: number) => Effect.Effect<void, E>
): Effect.Effect<void, E> => {
  if (from >= to) return Effect.void
  const until = Math.min(from + aheadPiece, to)
  const rest = until >= to ? Effect.void : Effect.andThen(Effect.yieldNow, Effect.suspend(() => writeAhead(until, to, writeAt)))
  return Effect.andThen(writeAt(new Uint8Array(until - from), from), rest)
}

/**
 * Creates a journal in `directory`, its file open in a scope forked from `files`, written ahead to
 * `ahead` bytes (or its header, if longer). Nothing is left behind if it fails.
 */
export const open = Effect.fnUntraced(function*(
  fs: FileSystem.FileSystem,
  path: Path.Path,
  directory: string,
  self: Owner.Owner,
  files: Scope.Scope,
  ahead: number
) {
  const journalPath = path.join(directory, Journal.fileName(self.pid, crypto.randomUUID()))
  const header = Journal.headerLine(self, yield* Clock.currentTimeMillis)
  const scope = yield* Scope.fork(files)
  const file = yield* Effect.gen(function*() {
    // A new name, created exclusively: never an existing file, never through a link. Written at
    // positions (not O_APPEND): records go over the zeros written ahead.
    const file = yield* fs.open(journalPath, { flag: "wx" }).pipe(Scope.provide(scope))
    yield* file.writeAll(header)
    if (ahead > header.length) yield* file.writeAll(new Uint8Array(ahead - header.length))
    yield* file.sync
    yield* RegularFile.syncDirectory(fs, directory)
    return file
  }).pipe(Effect.onError(() => Effect.andThen(Scope.close(scope, Exit.void), Effect.ignore(fs.remove(journalPath)))))
  const journal: JournalFile = {
    path: journalPath,
    file,
    size: header.length,
    ahead: Math.max(ahead, header.length),
    cuts: 0,
    dirty: new Set(),
    unsyncable: undefined,
    scope
  }
  return journal
})

/**
 * Removes, as the log closes, the journals with nothing left to cover (every session file they cover
 * synced), each with the directory synced after; answers whether none of them stays on disk. One
 * already gone was removed by a retirement cut short by the close, its removal under way.
 */
export const removeCovered = (fs: FileSystem.FileSystem, directory: string, generations: ReadonlyArray<JournalFile>): Effect.Effect<boolean> =>
  Effect.reduce(generations, () => true, (none, generation) => {
    if (generation.dirty.size > 0 || generation.unsyncable !== undefined) return Effect.succeed(false)
    const removed = fs.remove(generation.path).pipe(Effect.catchReason("PlatformError", "NotFound", () => Effect.void))
    return Effect.map(Effect.exit(Effect.andThen(removed, RegularFile.syncDirectory(fs, directory))), (exit) => none && Exit.isSuccess(exit))
  })

/**
 * Removes a journal whose batches are all durable in their session files: syncs them one by one, removes
 * it (then `removed` forgets it: if this is cut short, closing the log removes it), closes its file.
 */
export const retire = (
  fs: FileSystem.FileSystem,
  directory: string,
  journal: JournalFile,
  removed: () => void,
  sync: (f: FileSystem.File) => Effect.Effect<void, PlatformError.PlatformError>
): Effect.Effect<void> =>
  Effect.gen(function*() {
    const kept = () => Effect.logWarning(`SessionLogFile: ${journal.path} kept: ${journal.unsyncable}; recovery replays it`)
    // One at a time: all at once, they would fill the thread pool (4 threads), and the next journal's
    // fsync, which every append waits for, would queue behind them. A file released meanwhile (its
    // writer closed) was synced by its writer and may be closed: it is skipped.
    for (const f of [...journal.dirty]) {
      // Asked before each, and once more after: a writer closing may have failed to sync its file meanwhile.
      if (journal.unsyncable !== undefined) return yield* kept()
      if (journal.dirty.has(f)) yield* sync(f)
    }
    if (journal.unsyncable !== undefined) return yield* kept()
    journal.dirty.clear()
    yield* fs.remove(journal.path)
    removed()
    yield* Scope.close(journal.scope, Exit.void)
    yield* RegularFile.syncDirectory(fs, directory)
  }).pipe(Effect.catch((error) =>
    Effect.logWarning(
      `SessionLogFile: ${journal.path} kept: ${error.message}; ${journal.unsyncable === undefined ? "it is removed on close" : "recovery replays it"}`
    )
  ))
