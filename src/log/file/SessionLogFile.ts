/**
 * The embedded default `SessionLog`: one append-only JSONL file per session in a directory.
 *
 * - An append is acknowledged only after its bytes are on disk (fsync). The log core groups appends
 *   that arrive while a session's batch is being written into its next batch, so one write and one
 *   fsync acknowledge them all (group commit), and no acknowledgement precedes its batch's fsync.
 * - A process appends to a session only while it holds the session's lock file; a lock left by a
 *   process that is gone is taken over.
 * - Loading streams the file (constant memory). A torn last line (no trailing newline: a crash
 *   mid-write, never acknowledged) is left out of reads and truncated when the session is next opened
 *   for appending; any other damage is a typed error naming the session and the line.
 * - Journal mode (`journal: true`): instead of an fsync per session file, one fsync of a shared
 *   write-ahead journal acknowledges the batches of all sessions; session files are synced at
 *   checkpoints. A dead process's journal is replayed when the directory is next opened or one of its
 *   sessions is taken over.
 *
 * The parts: `Format` (lines and checksums), `Scanner` and `Reader` (reading), `Writer` (appending),
 * `Lock`, `Journal`, `JournalCommitter` and `Recovery` (journal mode); this module wires them.
 *
 * @since 0.2.0
 */
import { Effect, Exit, FileSystem, Layer, Path, Result, Scope, Semaphore, Stream } from "effect"
import type * as SessionId from "../SessionId.ts"
import * as SessionInvariant from "../SessionInvariant.ts"
import * as SessionLog from "../SessionLog.ts"
import type { InvariantViolation, SessionLogError } from "../SessionLogError.ts"
import * as Format from "./Format.ts"
import * as JournalCommitter from "./JournalCommitter.ts"
import * as Lock from "./Lock.ts"
import * as Reader from "./Reader.ts"
import * as Recovery from "./Recovery.ts"
import * as Scanner from "./Scanner.ts"
import * as Watcher from "./Watcher.ts"
import * as Writer from "./Writer.ts"

/**
 * Where the session files are, and how appends are made durable.
 *
 * @since 0.2.0
 * @category models
 */
export interface Options {
  /** The directory holding the session files; created if missing. */
  readonly directory: string
  /**
   * Journal mode: appends to all sessions are acknowledged by one fsync of a shared write-ahead
   * journal instead of one fsync per session file; session files are fsynced at checkpoints, once
   * the journal holds `checkpointBytes` (default 4 MiB). Pays off with many concurrent sessions.
   */
  readonly journal?: boolean | { readonly checkpointBytes?: number | undefined } | undefined
  /**
   * Watch the directory for commits other processes make, so that `subscribe` (and so
   * `ProjectionStore.changes`) carries them too, each entry once, in seq order per session: one
   * watch on the directory, a poll of the files' sizes as a safety net (every `pollInterval`,
   * default 1 s) and as the fallback where the watch can't be installed (every
   * `fallbackPollInterval`, default 200 ms). Off by default: it costs a descriptor and a wakeup on
   * every write to the directory, which a process that only appends doesn't need.
   */
  readonly watch?: boolean | Watcher.Options | undefined
}

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
export type Opened = Writer.Opened

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
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const directory = path.resolve(options.directory)
    yield* Lock.acquire(fs, path.join(directory, Format.lockName(session)))
    const { opened } = yield* Writer.prepare(fs, directory, fileOf(path, directory, session), session)
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
    const check = SessionInvariant.checker(invariants)
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const file = fileOf(path, options.directory, session)
    if (!(yield* fs.exists(file))) return undefined
    let events = 0
    let tornTailBytes = 0
    let violation: Verified["violation"]
    yield* Reader.scan(fs, file, session).pipe(
      Stream.takeWhile(() => violation === undefined),
      Stream.runForEach((item) =>
        Effect.sync(() => {
          if (item._tag === "Tail") tornTailBytes = item.length
          if (item._tag !== "Entry") return
          events++
          const reason = check(item.entry.type, item.entry.data, item.entry.seq)
          if (reason !== undefined) violation = { line: item.line, reason }
        })
      )
    )
    return { path: file, events, tornTailBytes, violation }
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
      const fs = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      const directory = path.resolve(options.directory)
      const layerScope = yield* Effect.scope
      yield* fs.makeDirectory(directory, { recursive: true }).pipe(Effect.mapError(SessionLog.toError("layerFileSystem")))
      // Acknowledged appends a dead process left only in its journal go into their files first.
      yield* Recovery.recoverAll(fs, path, directory).pipe(Effect.mapError(SessionLog.toError("recover")))
      const journal = options.journal === undefined || options.journal === false
        ? undefined
        : yield* JournalCommitter.make(fs, path, directory, layerScope, {
          checkpointBytes: (typeof options.journal === "object" ? options.journal.checkpointBytes : undefined) ??
            4 * 1024 * 1024
        }).pipe(Effect.mapError(SessionLog.toError("layerFileSystem")))

      const writers = new Map<SessionId.SessionId, Writer.Writer>()
      const opening = yield* Semaphore.make(1)
      const fileOfSession = (session: SessionId.SessionId) => path.join(directory, Format.fileName(session))

      const openWriter = (session: SessionId.SessionId) =>
        opening.withPermit(Effect.suspend(() => {
          const existing = writers.get(session)
          if (existing !== undefined) return Effect.succeed(existing)
          return Effect.gen(function*() {
            // The writer lives as long as the layer: its lock and handle close with it.
            const scope = yield* Scope.fork(layerScope)
            const writer = yield* Effect.gen(function*() {
              yield* Lock.acquire(fs, path.join(directory, Format.lockName(session)))
              // A process that died holding this session may have left acknowledged appends in its journal.
              yield* Recovery.recoverSession(fs, path, directory, session)
              const writer = yield* Writer.open(fs, directory, fileOfSession(session), session)
              // Closing: what the journal holds for this file becomes durable in the file itself.
              if (journal !== undefined) yield* Effect.addFinalizer(() => journal.release(writer.file))
              return writer
            }).pipe(Scope.provide(scope), Effect.onError(() => Scope.close(scope, Exit.void)))
            writers.set(session, writer)
            return writer
          })
        }))

      const read = (session: SessionId.SessionId, fromSeq: number) =>
        Stream.unwrap(Effect.gen(function*() {
          // While this process holds the session's lock, its writer knows where the committed end is
          // and no one else can add to it: a read from there has nothing to read. A read from any
          // other late seq bisects to it.
          const writer = writers.get(session)
          if (writer !== undefined && fromSeq >= writer.end.seq) return Stream.empty
          const file = fileOfSession(session)
          if (!(yield* fs.exists(file))) return Stream.empty
          const from = fromSeq > 0 ? (yield* Reader.locate(fs, file, session, fromSeq)) ?? Scanner.start : Scanner.start
          // Lines of a batch still being written and synced are not committed yet: a read ends at
          // the committed end this process knows, so it never shows what a crash could still undo.
          const committedEnd = writer?.end.seq ?? Number.POSITIVE_INFINITY
          return Reader.scan(fs, file, session, from).pipe(
            Stream.filterMap((item) =>
              item._tag === "Entry" && item.entry.seq >= fromSeq ? Result.succeed(item.entry) : Result.failVoid
            ),
            Stream.takeWhile((entry) => entry.seq < committedEnd)
          )
        }))

      return yield* SessionLog.make({
        append: (session, batch) =>
          Effect.flatMap(
            writers.get(session) === undefined ? openWriter(session) : Effect.succeed(writers.get(session)!),
            (writer) => Writer.append(fs, directory, session, writer, batch, journal)
          ),
        read,
        sessions: Effect.map(
          fs.readDirectory(directory),
          (names) =>
            names.filter((name) => name.endsWith(Format.extension)).map((name) => name.slice(0, -Format.extension.length))
        ),
        announcements: options.watch === undefined || options.watch === false
          ? undefined
          : yield* Watcher.make(fs, path, directory, {
            ...(typeof options.watch === "object" ? options.watch : {}),
            owned: (session) => writers.has(session)
          })
      })
    })
  )
