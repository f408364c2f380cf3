/**
 * Appending to one session file. A writer exists while this process holds the session's lock: it
 * knows where the committed end is, writes each batch the log core hands it with one write, and
 * answers only once the batch is durable, by an fsync of the file or, in journal mode, of the
 * shared journal. Before each batch it checks that its lock file is still its own, and after the
 * write that the session file at its path is still the one it holds, ending where its batch ends: a
 * lock removed by hand, or a session file deleted, replaced or appended to by someone else, stops the
 * writer (`OwnershipLost`) instead of acknowledging appends another writer may interleave with, or
 * that went to a deleted file. Two `lstat`s per batch, none per entry (a lone batch checks the
 * session file without one, see `BlockingIo.Blocking.stillAt`; on the journal's I/O thread, one
 * `stat` of the directory per group of batches stands for the locks' while no entry in it changes,
 * see `IoCalls`).
 *
 * A lone batch (no other session appending) is written at once (`appendNow`), with blocking calls,
 * as one synchronous step, and in journal mode writes and syncs the journal itself. A batch beside
 * others' (`appendShared`) makes the same blocking calls in place, before and after what makes it
 * durable (an fsync through the thread pool), or in journal mode hands them all to the journal's
 * I/O thread (`IoThread`).
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as FileSystem from "effect/FileSystem"
import * as PlatformError from "effect/PlatformError"
import * as Result from "effect/Result"
import type * as SessionLog from "../SessionLog.ts"
import { OwnershipLost } from "../SessionLogError.ts"
import * as BlockingIo from "./BlockingIo.ts"
import * as Cut from "./Cut.ts"
import * as Format from "./Format.ts"
import * as IoCalls from "./IoCalls.ts"
import type * as JournalCommitter from "./JournalCommitter.ts"
import type * as Lock from "./Lock.ts"
import * as RegularFile from "./RegularFile.ts"
import type * as Scanner from "./Scanner.ts"
import * as Tail from "./Tail.ts"

/** A session file open for appending, and where its next entry goes: the end of what is durable. */
export interface Writer {
  readonly path: string
  /** The directory holding the session file and its lock. */
  readonly directory: string
  readonly file: FileSystem.File
  readonly lock: Lock.Held
  /** The session file this writer holds, as it was opened: its path must keep naming it. */
  readonly opened: FileSystem.File.Info
  end: Scanner.Position
  /** Why this writer stopped: once set, every append through it fails with it. */
  lost: OwnershipLost | undefined
  /** A failed batch of it may be replayed from the journal after a crash: it keeps its lock till the log closes. */
  replayable: boolean
  /** What the journal's I/O thread is told of this writer: made once, so that the thread is told once (see `IoThread`). */
  onThread: IoCalls.Write | undefined
}

/** Opens a prepared session file for appending, under the lock held. */
export const open = Effect.fnUntraced(function*(
  fs: FileSystem.FileSystem,
  directory: string,
  path: string,
  session: string,
  lock: Lock.Held,
  maxLineBytes?: number
) {
  const { end } = yield* Tail.prepare(fs, directory, path, session, maxLineBytes)
  // Readable too: `Blocking.stillAt` reads the last byte back.
  const { file, info: opened } = yield* RegularFile.opened(fs, path, "a+")
  return { path, directory, file, lock, opened, end, lost: undefined, replayable: false, onThread: undefined } satisfies Writer
})

/** Why the session file at the writer's path (`found`, its `lstat`) is no longer what it wrote, ending at `end`. */
const displacement = (writer: Writer, found: BlockingIo.Identity | undefined, end: number): string | undefined =>
  found === undefined
    ? "was deleted while this process appended to it"
    : !BlockingIo.isFile(found, writer.opened)
    ? "was replaced or moved while this process appended to it"
    : Number(found.size) !== end
    ? `ends at byte ${Number(found.size)}, not ${end}: another process appended to it (was its lock removed?)`
    : undefined

const uncheckable = (error: { readonly message: string }) => `can't be checked after a write (${error.message})`

/** The writer stops: every append through it fails with `lost` from now on. */
const lose = (writer: Writer, lost: OwnershipLost) => {
  writer.lost = lost
  return lost
}

const stop = (writer: Writer, lost: OwnershipLost) => Effect.fail(lose(writer, lost))

/** The batch is durable in the file the writer holds: its end moves past it. */
const advance = (writer: Writer, start: Scanner.Position, entries: number, bytes: number): number => {
  writer.end = { offset: start.offset + bytes, line: start.line + entries, seq: start.seq + entries }
  return start.seq
}

/**
 * Writes a batch after the writer's end and makes it durable, through `io`: each call an effect, the
 * fsync (or the journal's committer) through the thread pool; where blocking calls are turned off, or
 * a file has no descriptor (see `appendShared`). Answers the seq of its first entry. A batch that fails
 * is cut from the file; if it can't be, the writer stops (`OwnershipLost`) rather than append after
 * bytes it can't account for.
 */
export const append = Effect.fnUntraced(function*(
  session: string,
  writer: Writer,
  batch: ReadonlyArray<SessionLog.Prepared>,
  io: BlockingIo.Io,
  journal: JournalCommitter.Committer | undefined
) {
  if (writer.lost !== undefined) return yield* Effect.fail(writer.lost)
  yield* writer.lock.check(io).pipe(Effect.catchTag("OwnershipLost", (lost) => stop(writer, lost)))
  const start = writer.end
  const bytes = Format.entryLines(batch, start.seq)
  const atPath = RegularFile.atPath(writer.path)
  const durable = journal === undefined
    ? Effect.mapError(io.sync(writer.file, writer.path), atPath)
    : journal.commit({ session, file: writer.file, offset: start.offset, bytes })
  const written = yield* Effect.exit(Effect.andThen(Effect.mapError(io.write(writer.file, writer.path, bytes), atPath), durable))
  if (Exit.isFailure(written)) return yield* Cut.thenFail(writer, start, written.cause, journal)
  // Durable, but in the file the path names, where this writer's batch ends? If not, it is not
  // acknowledged, and nothing is cut: the file may hold another writer's acknowledged lines.
  const problem = yield* io.lstat(writer.path).pipe(
    Effect.map((found) => displacement(writer, found, start.offset + bytes.length)),
    Effect.catch((error) => Effect.succeed(uncheckable(error)))
  )
  if (problem !== undefined) return yield* stop(writer, new OwnershipLost({ path: writer.path, detail: problem }))
  return advance(writer, start, batch.length, bytes.length)
})

/** What a batch written with blocking calls fails with. */
export type Failure = OwnershipLost | PlatformError.PlatformError | JournalCommitter.Error

/** Names the session file in a failure of one of its calls. */
const namedFor = (writer: Writer) => (error: PlatformError.PlatformError | undefined) => error && RegularFile.atPath(writer.path)(error)

/**
 * A batch's first step with blocking calls: the writer still going, and its lock still its own.
 * Answers where the batch starts and its bytes, to write after the writer's end.
 */
const begin = (
  writer: Writer,
  batch: ReadonlyArray<SessionLog.Prepared>,
  blocking: BlockingIo.Blocking
): Result.Result<{ readonly start: Scanner.Position; readonly bytes: Uint8Array }, Failure> => {
  if (writer.lost !== undefined) return Result.fail(writer.lost)
  const held = blocking.lstat(writer.lock.path)
  if (Result.isFailure(held)) return Result.fail(held.failure)
  const lockLost = writer.lock.verify(held.success)
  if (lockLost !== undefined) return Result.fail(lose(writer, lockLost))
  const start = writer.end
  return Result.succeed({ start, bytes: Format.entryLines(batch, start.seq) })
}

/**
 * A batch's last step, once it is durable (`failed` undefined) or not: is it in the file the path
 * names, where it ends? (See `append`.) `withoutStat`: asked first without a stat, which would make
 * the file's next sync dearer (see `Blocking.stillAt`); worth it for a lone batch, whose sync comes
 * next, not for batches appending at once, which are bound by CPU. Answers the seq of its first
 * entry, or why it isn't acknowledged.
 */
const finish = (
  writer: Writer,
  fd: number,
  start: Scanner.Position,
  entries: number,
  bytes: number,
  blocking: BlockingIo.Blocking,
  withoutStat: boolean
): Result.Result<number, Failure> => {
  const end = start.offset + bytes
  if (!withoutStat || !blocking.stillAt(fd, writer.path, end)) {
    const found = blocking.lstat(writer.path)
    const problem = Result.isFailure(found) ? uncheckable(found.failure) : displacement(writer, found.success, end)
    if (problem !== undefined) return Result.fail(lose(writer, new OwnershipLost({ path: writer.path, detail: problem })))
  }
  return Result.succeed(advance(writer, start, entries, bytes))
}

/**
 * The same steps as `append`, at once, with blocking calls on the calling thread, for a lone batch:
 * the seq of its first entry or the failure, once durable (or not); `undefined`, having done
 * nothing, if it can't be written so (a file with no descriptor, or the journal's committer at work).
 */
export const appendNow = (
  session: string,
  writer: Writer,
  batch: ReadonlyArray<SessionLog.Prepared>,
  blocking: BlockingIo.Blocking,
  journal: JournalCommitter.Committer | undefined
): Result.Result<number, Failure> | undefined => {
  const fd = BlockingIo.descriptorOf(writer.file)
  if (fd === undefined || (journal !== undefined && !journal.idle())) return undefined
  const begun = begin(writer, batch, blocking)
  if (Result.isFailure(begun)) return Result.fail(begun.failure)
  const { bytes, start } = begun.success
  const named = namedFor(writer)
  // Durable by an fsync of the session file, or of the journal holding the batch.
  const failed = named(blocking.write(fd, writer.path, bytes)) ??
    (journal === undefined
      ? named(blocking.sync(fd, writer.path))
      : journal.commitBlocking({ session, file: writer.file, offset: start.offset, bytes }, blocking))
  if (failed !== undefined) return Result.fail(Cut.blocking(writer, fd, start, blocking, failed, journal))
  return finish(writer, fd, start, batch.length, bytes.length, blocking, true)
}

/**
 * The same steps as `append` for a batch appended beside other sessions' (through the thread pool):
 * with blocking calls for all but making it durable, which is the journal's commit or an fsync
 * through the thread pool (so that batches' fsyncs overlap), with no effect per call. Without
 * blocking calls, or for a file with no descriptor, it is `append`.
 */
export const appendShared = (
  session: string,
  writer: Writer,
  batch: ReadonlyArray<SessionLog.Prepared>,
  blocking: BlockingIo.Blocking | undefined,
  io: BlockingIo.Io,
  journal: JournalCommitter.Committer | undefined
): Effect.Effect<number, Failure> =>
  Effect.suspend(() => {
    const fd = BlockingIo.descriptorOf(writer.file)
    if (blocking === undefined || fd === undefined) return append(session, writer, batch, io, journal)
    if (journal?.commitWriting !== undefined) return appendThrough(session, writer, batch, fd, journal, journal.commitWriting)
    const begun = begin(writer, batch, blocking)
    if (Result.isFailure(begun)) return Effect.fail(begun.failure)
    const { bytes, start } = begun.success
    const failed = namedFor(writer)(blocking.write(fd, writer.path, bytes))
    const durable: Effect.Effect<void, Failure> = failed !== undefined
      ? Effect.fail(failed)
      : journal === undefined
      ? Effect.mapError(io.sync(writer.file, writer.path), RegularFile.atPath(writer.path))
      : journal.commit({ session, file: writer.file, offset: start.offset, bytes })
    return Effect.flatMap(Effect.exit(durable), (exit) =>
      Exit.isSuccess(exit)
        ? Effect.fromResult(finish(writer, fd, start, batch.length, bytes.length, blocking, false))
        : Cut.thenFail(writer, start, exit.cause, journal))
  })

/**
 * `appendShared` through the journal's I/O thread, which makes the lock check, the write, the check after
 * it and the journal's commit, in a round with others' batches; what it found is judged here, as `finish` does.
 */
const appendThrough = (
  session: string,
  writer: Writer,
  batch: ReadonlyArray<SessionLog.Prepared>,
  fd: number,
  journal: JournalCommitter.Committer,
  commitWriting: NonNullable<JournalCommitter.Committer["commitWriting"]>
): Effect.Effect<number, Failure> => {
  if (writer.lost !== undefined) return Effect.fail(writer.lost)
  const { directory, end: start, lock, path } = writer
  const bytes = Format.entryLines(batch, start.seq)
  const write = writer.onThread ??= { fd, path, directory, lock: lock.path, lockDev: lock.dev, lockIno: lock.ino }
  const committed = commitWriting({ session, file: writer.file, offset: start.offset, bytes, write })
  return Effect.flatMap(Effect.exit(committed), (exit): Effect.Effect<number, Failure> => {
    if (Exit.isFailure(exit)) return Cut.thenFail(writer, start, exit.cause, journal)
    const outcome = exit.value
    if (outcome._tag === "LockFailed") return Effect.fail(IoCalls.toPlatformError(outcome.fault, lock.path))
    // The thread compared the lock's identity as `verify` does: it finds the same.
    const replaced = () => new OwnershipLost({ path: lock.path, detail: "was replaced while this process held it" })
    if (outcome._tag === "LockNotHeld") return Effect.fail(lose(writer, lock.verify(outcome.found) ?? replaced()))
    if (outcome._tag === "WriteFailed") return Cut.thenFail(writer, start, Cause.fail(IoCalls.toPlatformError(outcome.fault, path)), journal)
    const problem = outcome.fault !== undefined ? uncheckable(outcome.fault) : displacement(writer, outcome.found, start.offset + bytes.length)
    if (problem !== undefined) return Effect.fail(lose(writer, new OwnershipLost({ path, detail: problem })))
    return Effect.succeed(advance(writer, start, batch.length, bytes.length))
  })
}
