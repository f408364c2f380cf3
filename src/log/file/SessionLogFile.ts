/**
 * The embedded default `SessionLog`: one append-only JSONL file per session in a directory.
 *
 * - An append is acknowledged only after its bytes are on disk (fsync). The log core groups appends
 *   that arrive while a session's batch is being written into its next batch, so one write and one
 *   fsync acknowledge them all (group commit), and no acknowledgement precedes its batch's fsync.
 * - A process appends to a session only while it holds the session's lock file; a lock left by a
 *   process that is gone (even if its pid was reused since) is taken over. A writer whose lock or
 *   session file is removed or replaced under it stops acknowledging.
 * - Session files, locks and journals are never opened through a symbolic link, and never unless
 *   they are regular files (`UnsafePath`).
 * - Loading streams the file (constant memory, lines at most `maxLineBytes`). A torn last line (not
 *   a complete line with a valid checksum: a crash mid-write, never acknowledged) is left out of
 *   reads and truncated when the session is next opened for appending; a complete last line that
 *   lost only its newline is kept. Any other damage is a typed error naming the session and the line.
 * - Journal mode (`journal: true`): instead of an fsync per session file, one fsync of a shared
 *   write-ahead journal acknowledges the batches of all sessions; session files are synced at
 *   checkpoints. A dead process's journal is replayed when the directory is next opened or one of its
 *   sessions is taken over.
 *
 * The parts: `Format` (lines and checksums), `Scanner` and `Reader` (reading), `Writer` (appending), `Lock`,
 * `Journal`, `JournalFile`, `JournalCommitter`, `JournalRound`, `IoThread` and `Recovery` (journal mode).
 * @since 0.2.0
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Layer from "effect/Layer"
import * as Path from "effect/Path"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { DurationInput, DurationOrNever } from "../internal/durationInput.ts"
import * as SessionId from "../SessionId.ts"
import * as SessionInvariant from "../SessionInvariant.ts"
import * as SessionLog from "../SessionLog.ts"
import { InvalidOptions, type InvariantViolation, SessionLogError } from "../SessionLogError.ts"
import * as BlockingIo from "./BlockingIo.ts"
import * as Format from "./Format.ts"
import * as IoThread from "./IoThread.ts"
import * as JournalCommitter from "./JournalCommitter.ts"
import * as Lock from "./Lock.ts"
import * as Owner from "./Owner.ts"
import * as Reader from "./Reader.ts"
import * as RegularFile from "./RegularFile.ts"
import * as Recovery from "./Recovery.ts"
import * as Scanner from "./Scanner.ts"
import * as Watcher from "./Watcher.ts"
import * as Tail from "./Tail.ts"
import * as Writer from "./Writer.ts"
import * as Writers from "./Writers.ts"

/**
 * Where the session files are, how appends are made durable, and the longest line read; validated
 * when the layer is built (and by `verify` and `repair`).
 *
 * @since 0.2.0
 * @category models
 */
export const Options = Schema.Struct({
  /** The directory holding the session files; created if missing. */
  directory: Schema.String.check(Schema.isMinLength(1)),
  /**
   * Journal mode: appends to all sessions are acknowledged by one fsync of a shared write-ahead
   * journal instead of one fsync per session file; session files are fsynced at checkpoints, once
   * the journal holds `checkpointBytes` (default 4 MiB). Pays off with many concurrent sessions.
   */
  journal: Schema.optional(Schema.Union([
    Schema.Boolean,
    Schema.Struct({ checkpointBytes: Schema.optional(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 2 ** 30 }))) })
  ])),
  /**
   * The longest line a session file may hold, in bytes (default 4 MiB): a longer line is damage
   * (so a file with no newline is never read whole into memory), and an append whose line would be
   * longer is refused (`InvalidPayload`).
   */
  maxLineBytes: Schema.optional(Schema.Int.check(Schema.isBetween({ minimum: 1024, maximum: 256 * 1024 * 1024 }))),
  /**
   * Sessions to open for appending while the layer is built, held until it closes: their locks are
   * taken and torn tails cut then, so a session another process holds fails the layer (a server
   * refuses to start) instead of its first append.
   */
  open: Schema.optional(Schema.Array(SessionId.SessionId)),
  /**
   * How long a session's writer may sit unused before it is closed and its lock released (default 5
   * minutes): a process appending to many sessions holds only those in use. Sessions in `open` stay held.
   */
  idleWriterTimeout: Schema.optional(DurationOrNever),
  /**
   * Whether the log may make blocking calls on the calling thread (default true): writes and
   * `lstat`s always (they meet the page cache, not the disk), and the fsync of an append made while
   * no other session is appending, for about the latency of a bare write + fsync. Concurrent
   * sessions' fsyncs always go through the thread pool (or the journal). `false`: every call goes
   * through the thread pool, for a process where nothing may hold the event loop.
   */
  blocking: Schema.optional(Schema.Boolean),
  /**
   * Watch the directory for commits other processes make, so that `subscribe` (and so
   * `ProjectionStore.changes`) carries them too, each entry once, in seq order per session: one
   * watch on the directory, a poll of the files' sizes as a safety net (every `pollInterval`,
   * default 1 s) and as the fallback where the watch can't be installed (every
   * `fallbackPollInterval`, default 200 ms), while anyone subscribes (what it can't tell: see `Watcher`). Off
   * by default: it costs a descriptor and a wakeup on every write to the directory, which a process that only appends doesn't need.
   */
  watch: Schema.optional(Schema.Union([
    Schema.Boolean,
    Schema.Struct({ pollInterval: Schema.optional(DurationInput), fallbackPollInterval: Schema.optional(DurationInput) })
  ]))
})

/**
 * @since 0.2.0
 * @category models
 */
export type Options = typeof Options.Type

const decodeOptions = Schema.decodeUnknownResult(Options, { onExcessProperty: "error", errors: "all" })

/** The options, checked, or a `SessionLogError` (`InvalidOptions`) naming what is wrong. */
const validated = (method: string, options: Options) => {
  const decoded = decodeOptions(options)
  return Result.isSuccess(decoded)
    ? Effect.succeed(decoded.success)
    : Effect.fail(SessionLogError.fromReason({ method, reason: new InvalidOptions({ detail: decoded.failure.message }) }))
}

/** What a line holds besides the event's type and payload: braces, keys, seq, time, checksum, newline. */
const envelopeBytes = 96

/**
 * The path of a session's file in a directory.
 *
 * @since 0.2.0
 * @category paths
 */
export const fileOf = (path: Path.Path, directory: string, session: SessionId.SessionId): string =>
  path.join(path.resolve(directory), Format.fileName(session))

/**
 * What opening a session for appending found: its entries and the bytes of a torn tail it cut.
 *
 * @since 0.2.0
 * @category models
 */
export type Opened = Tail.Opened

/**
 * Takes a session's lock for a moment and cuts its torn tail, if it has one: what opening it for
 * appending would do, for tools that only check logs. Fails with `Locked` while a process appends.
 *
 * @since 0.2.0
 * @category maintenance
 */
export const repair = (
  options: Options,
  session: SessionId.SessionId
): Effect.Effect<Opened, SessionLogError, FileSystem.FileSystem | Path.Path> =>
  Effect.scoped(Effect.gen(function*() {
    const { directory: dir, maxLineBytes } = yield* validated("repair", options)
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const directory = path.resolve(dir)
    yield* Lock.acquire(fs, path.join(directory, Format.lockName(session)), yield* Owner.self(fs))
    const { opened } = yield* Tail.prepare(fs, directory, fileOf(path, directory, session), session, maxLineBytes)
    return opened
  })).pipe(Effect.mapError(SessionLog.toError("repair", session)))

/**
 * What `verify` found in a whole session file.
 *
 * @since 0.2.0
 * @category models
 */
export interface Verified {
  readonly path: string
  readonly events: number
  /** Bytes after the last complete line: a write that was never acknowledged. */
  readonly tornTailBytes: number
  /** The first event that breaks an invariant, and its line; reading stops there. */
  readonly violation?: { readonly line: number; readonly reason: InvariantViolation } | undefined
}

/**
 * Reads a session file once, checking every line and every invariant: damage fails, naming its
 * line; an invariant violation is reported with its line. `undefined` when the session has no file.
 *
 * @since 0.2.0
 * @category maintenance
 */
export const verify = (
  options: Options,
  session: SessionId.SessionId,
  invariants: ReadonlyArray<SessionInvariant.Invariant>
): Effect.Effect<Verified | undefined, SessionLogError, FileSystem.FileSystem | Path.Path> =>
  Effect.gen(function*() {
    const { directory, maxLineBytes } = yield* validated("verify", options)
    const check = SessionInvariant.checker(invariants)
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const file = fileOf(path, directory, session)
    if (!(yield* RegularFile.exists(fs, file))) return undefined
    return { path: file, ...yield* Reader.check(fs, file, session, maxLineBytes ?? Scanner.defaultMaxLineBytes, check) }
  }).pipe(Effect.mapError(SessionLog.toError("verify", session)))

/**
 * The session log over a directory of JSONL files.
 *
 * @since 0.2.0
 * @category layers
 */
export const layerFileSystem = (
  options: Options
): Layer.Layer<SessionLog.SessionLog, SessionLogError, FileSystem.FileSystem | Path.Path> =>
  Layer.effect(
    SessionLog.SessionLog,
    Effect.gen(function*() {
      const valid = yield* validated("layerFileSystem", options)
      const maxLineBytes = valid.maxLineBytes ?? Scanner.defaultMaxLineBytes
      const fs = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      const directory = path.resolve(valid.directory)
      const layerScope = yield* Effect.scope
      const self = yield* Owner.self(fs)
      yield* fs.makeDirectory(directory, { recursive: true }).pipe(Effect.mapError(SessionLog.toError("layerFileSystem")))
      // Acknowledged appends a dead process left only in its journal go into their files first.
      yield* Recovery.recoverAll(fs, path, directory, self).pipe(Effect.mapError(SessionLog.toError("recover")))
      const { alone: blocking, shared } = BlockingIo.choose(fs, yield* BlockingIo.BlockingIo, valid.blocking !== false)
      const heldBack = yield* Writers.holdBack
      const journal = valid.journal === undefined || valid.journal === false ? undefined
        : yield* JournalCommitter.make(fs, path, directory, layerScope, self, {
          checkpointBytes: (typeof valid.journal === "object" ? valid.journal.checkpointBytes : undefined) ?? 4 * 1024 * 1024,
          io: shared,
          thread: yield* IoThread.wanted(blocking)
        }).pipe(Effect.mapError(SessionLog.toError("layerFileSystem")))
      if (journal !== undefined) heldBack.journalStays = journal.kept

      const idle = Duration.fromInputUnsafe(valid.idleWriterTimeout ?? "5 minutes")
      const writers = yield* Writers.make({ fs, path, directory, self, journal, maxLineBytes, idle, heldBack })
      const fileOfSession = (session: SessionId.SessionId) => path.join(directory, Format.fileName(session))

      const read = (session: SessionId.SessionId, fromSeq: number) =>
        Stream.unwrap(Effect.gen(function*() {
          // While this process holds the session's lock, its writer knows where the committed end is
          // and no one else can add to it: a read from there has nothing to read. A read from any
          // other late seq bisects to it. A writer that lost the session knows nothing any more.
          const found = writers.get(session)
          const writer = found?.lost === undefined ? found : undefined
          if (writer !== undefined && fromSeq >= writer.end.seq) return Stream.empty
          const file = fileOfSession(session)
          if (!(yield* RegularFile.exists(fs, file))) return Stream.empty
          const from = fromSeq > 0 ? (yield* Reader.locate(fs, file, session, fromSeq)) ?? Scanner.start : Scanner.start
          // Lines of a batch still being written and synced are not committed yet: a read ends at
          // the committed end this process knows, so it never shows what a crash could still undo.
          const committedEnd = writer?.end.seq ?? Number.POSITIVE_INFINITY
          return Reader.scan(fs, file, session, from, maxLineBytes).pipe(
            Stream.filterMap((item) =>
              item._tag === "Entry" && item.entry.seq >= fromSeq ? Result.succeed(item.entry) : Result.failVoid
            ),
            Stream.takeWhile((entry) => entry.seq < committedEnd)
          )
        }))

      for (const session of valid.open ?? []) {
        yield* writers.pin(session).pipe(Effect.mapError(SessionLog.toError("open", session)))
      }

      return yield* SessionLog.make({
        append: (session, batch) => writers.use(session, (writer) => Writer.appendShared(session, writer, batch, blocking, shared, journal)),
        appendNow: blocking === undefined
          ? undefined
          : (session, batch) => writers.now(session, (writer) => Writer.appendNow(session, writer, batch, blocking, journal)),
        read,
        sessions: Effect.map(
          fs.readDirectory(directory),
          (names) =>
            names.filter((name) => name.endsWith(Format.extension)).map((name) => name.slice(0, -Format.extension.length))
        ),
        maxEventBytes: maxLineBytes - envelopeBytes,
        announcements: valid.watch === undefined || valid.watch === false
          ? undefined
          : Watcher.make(fs, path, directory, {
            ...(typeof valid.watch === "object" ? valid.watch : {}),
            maxLineBytes,
            owned: (session) => writers.get(session) !== undefined
          })
      })
    })
  )
