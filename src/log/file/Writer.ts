/**
 * Appending to one session file. A writer exists while this process holds the session's lock: it
 * knows where the committed end is, writes each batch the log core hands it with one write, and
 * answers only once the batch is durable, by an fsync of the file or, in journal mode, of the
 * shared journal.
 */
import { Clock, Effect, Exit, type FileSystem } from "effect"
import type * as SessionLog from "../SessionLog.ts"
import * as Format from "./Format.ts"
import type * as JournalCommitter from "./JournalCommitter.ts"
import * as Reader from "./Reader.ts"
import type * as Scanner from "./Scanner.ts"

/** A session file open for appending, and where its next entry goes: the end of what is durable. */
export interface Writer {
  readonly path: string
  readonly file: FileSystem.File
  end: Scanner.Position
}

/** What opening a file for appending found. */
export interface Opened {
  readonly entries: number
  /** Bytes of a torn tail that were truncated, 0 when the file was whole. */
  readonly repairedBytes: number
}

/** Makes a directory entry (a file created or removed in it) durable. */
export const syncDirectory = (fs: FileSystem.FileSystem, directory: string) =>
  Effect.scoped(Effect.flatMap(fs.open(directory, { flag: "r" }), (dir) => dir.sync))

/**
 * Brings a session file to a clean end, for appending: creates it with its header if it is missing
 * (or was left without a durable header by a crash), and cuts a torn tail. Answers where the next
 * entry goes and what was found. Only the lock holder may call this.
 */
export const prepare = Effect.fnUntraced(function*(
  fs: FileSystem.FileSystem,
  directory: string,
  path: string,
  session: string
) {
  const found = (yield* fs.exists(path)) ? yield* Reader.scanToEnd(fs, path, session) : undefined
  if (found === undefined || !found.header) {
    // New, or created by a crash before its header was durable: nothing in it was acknowledged.
    const header = Format.headerLine(session, yield* Clock.currentTimeMillis)
    yield* Effect.scoped(Effect.gen(function*() {
      const handle = yield* fs.open(path, { flag: "w" })
      yield* handle.writeAll(header)
      yield* handle.sync
    }))
    yield* syncDirectory(fs, directory)
    const end: Scanner.Position = { offset: header.length, line: 2, seq: 0 }
    return { end, opened: { entries: 0, repairedBytes: found?.tail ?? 0 } satisfies Opened }
  }
  if (found.tail > 0) {
    yield* fs.truncate(path, found.end.offset)
    yield* Effect.scoped(Effect.flatMap(fs.open(path, { flag: "r+" }), (handle) => handle.sync))
  }
  return { end: found.end, opened: { entries: found.end.seq, repairedBytes: found.tail } satisfies Opened }
})

/** Opens a prepared session file for appending. */
export const open = Effect.fnUntraced(function*(
  fs: FileSystem.FileSystem,
  directory: string,
  path: string,
  session: string
) {
  const { end } = yield* prepare(fs, directory, path, session)
  const file = yield* fs.open(path, { flag: "a" })
  return { path, file, end } satisfies Writer
})

/**
 * Writes a batch after the writer's end and makes it durable; answers the seq of its first entry.
 * A batch that fails is cut from the file, so an unacknowledged batch can't resurface.
 */
export const append = Effect.fnUntraced(function*(
  fs: FileSystem.FileSystem,
  directory: string,
  session: string,
  writer: Writer,
  batch: ReadonlyArray<SessionLog.Prepared>,
  journal: JournalCommitter.Committer | undefined
) {
  const start = writer.end
  let text = ""
  for (let i = 0; i < batch.length; i++) {
    const prepared = batch[i]!
    text += Format.entryLine(prepared.type, start.seq + i, prepared.time, prepared.json)
  }
  const bytes = Format.encodeLines(text)
  const durable = journal === undefined
    ? writer.file.sync
    : journal.commit({ session, file: writer.file, offset: start.offset, bytes })
  const written = yield* Effect.exit(Effect.andThen(writer.file.writeAll(bytes), durable))
  if (Exit.isFailure(written)) {
    const cut = yield* Effect.exit(Effect.andThen(writer.file.truncate(start.offset), writer.file.sync))
    if (Exit.isFailure(cut)) {
      const reopened = yield* Effect.exit(prepare(fs, directory, writer.path, session))
      if (Exit.isSuccess(reopened)) writer.end = reopened.value.end
    }
    return yield* Effect.failCause(written.cause)
  }
  writer.end = { offset: start.offset + bytes.length, line: start.line + batch.length, seq: start.seq + batch.length }
  return start.seq
})
