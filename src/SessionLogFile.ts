/**
 * The embedded default `SessionLog`: one append-only JSONL file per session in a directory.
 *
 * - An append is acknowledged only after its bytes are on disk (fsync). Each session has one writer
 *   fiber; appends that arrive while it writes are grouped into its next batch, so one write and one
 *   fsync acknowledge them all (group commit), and no acknowledgement precedes its batch's fsync.
 * - A process appends to a session only while it holds the session's lock file; a lock left by a
 *   process that is gone is taken over.
 * - Loading streams the file (constant memory). A torn last line (no trailing newline: a crash
 *   mid-write, never acknowledged) is left out of reads and truncated when the session is next opened
 *   for appending; any other damage is a typed error naming the session and the line.
 * - Journal mode (`journal: true`): instead of an fsync per session file, one fsync of a shared
 *   write-ahead journal (`SessionJournal`) acknowledges the batches of all sessions; session files are
 *   synced at checkpoints. A dead process's journal is replayed when the directory is next opened or
 *   one of its sessions is taken over.
 */
import {
  Cause,
  Clock,
  Deferred,
  Effect,
  Exit,
  FileSystem,
  Layer,
  Path,
  type PlatformError,
  PubSub,
  Queue,
  Scope,
  Semaphore,
  Stream
} from "effect"
import * as SessionEvent from "./SessionEvent.ts"
import * as SessionFile from "./SessionFile.ts"
import * as SessionId from "./SessionId.ts"
import * as SessionJournal from "./SessionJournal.ts"
import * as SessionLock from "./SessionLock.ts"
import { encodePayload, makeEntry, type ReadOptions, SessionLog } from "./SessionLog.ts"
import { Corrupt, SessionLogError, StorageFailure } from "./SessionLogError.ts"

export interface Options {
  /** The directory holding the session files; created if missing. */
  readonly directory: string
  /**
   * Journal mode: appends to all sessions are acknowledged by one fsync of a shared write-ahead
   * journal instead of one fsync per session file; session files are fsynced at checkpoints, once
   * the journal holds `checkpointBytes` (default 4 MiB). Pays off with many concurrent sessions.
   */
  readonly journal?: boolean | { readonly checkpointBytes?: number | undefined } | undefined
}

interface Pending {
  readonly type: string
  readonly json: string
  /** The payload's frozen copy: what the committed entry carries. */
  readonly copy: unknown
  readonly done: Deferred.Deferred<SessionEvent.Entry, SessionLogError>
}

interface Writer {
  readonly file: FileSystem.File
  readonly queue: Queue.Queue<Pending>
  /** The seq and byte offset the next entry gets: the end of what is durable. */
  end: SessionFile.Position
}

/** What opening a file for appending found. */
export interface Opened {
  readonly entries: number
  /** Bytes of a torn tail that were truncated, 0 when the file was whole. */
  readonly repairedBytes: number
}

const storageFailure = (method: string, session: string, what: string) => (cause: PlatformError.PlatformError) =>
  SessionLogError.fromReason({ method, session, reason: new StorageFailure({ detail: `${what}: ${cause.message}` }) })

/**
 * Scans a session file from a position. Fails on the first damage, naming the line; the torn tail,
 * if any, is the last item.
 */
export const scan = (
  fs: FileSystem.FileSystem,
  path: string,
  session: SessionId.SessionId,
  from: SessionFile.Position = SessionFile.start,
  method = "read"
): Stream.Stream<SessionFile.Item, SessionLogError> =>
  Stream.suspend(() => {
    const scanner = SessionFile.scanner(session, from)
    return fs.stream(path, { offset: from.offset, chunkSize: 256 * 1024 }).pipe(
      Stream.mapError(storageFailure(method, session, `can't read ${path}`)),
      Stream.mapAccum(scanner.initial, scanner.step, { onHalt: scanner.halt }),
      // Damage can only be the last item of a chunk: check chunks, not items.
      Stream.mapArrayEffect((items) => {
        const last = items[items.length - 1]!
        return last._tag === "Damage"
          ? Effect.fail(SessionLogError.fromReason({
            method,
            session,
            reason: new Corrupt({ line: last.line, detail: `${path}: ${last.detail}` })
          }))
          : Effect.succeed(items)
      })
    )
  })

/** Probes start small (most lines are short) and grow for long lines, up to a limit. */
const probeBytes = 4 * 1024
const maxProbeBytes = 4 * 1024 * 1024

/** The item of the first complete line in `bytes`, read from `offset`; `undefined` if there is none. */
const probe = (session: SessionId.SessionId, bytes: Uint8Array, offset: number, afterHeader: boolean) => {
  const newline = bytes.indexOf(10)
  if (newline === -1) return undefined
  const scanner = SessionFile.scanner(session, afterHeader ? { offset, line: 0, seq: -1 } : SessionFile.start)
  const [, items] = scanner.step(scanner.initial(), bytes.subarray(0, newline + 1))
  return items[0]
}

/**
 * Where the line with seq `fromSeq` starts, found by bisecting the file: lines are in seq order, so
 * reading from a late seq costs a few small reads instead of a scan of everything before it. The
 * header is always read and checked. Answers `undefined` whenever a probe can't tell (damage, a line
 * longer than any probe): the caller then scans from the start, which reports damage properly.
 */
const locate = (fs: FileSystem.FileSystem, path: string, session: SessionId.SessionId, fromSeq: number) =>
  Effect.scoped(Effect.gen(function*() {
    const file = yield* fs.open(path, { flag: "r" })
    const size = Number((yield* file.stat).size)
    const read = (offset: number, length: number) =>
      Effect.map(file.readAlloc(Math.min(length, size - offset), { position: BigInt(offset) }), (o) =>
        o._tag === "Some" ? o.value : new Uint8Array(0))
    /** The first complete line at or after `offset` (skipping `skip` bytes of a partial line). */
    const lineAt = Effect.fnUntraced(function*(offset: number, skipPartial: boolean) {
      for (let length = probeBytes; length <= maxProbeBytes; length *= 8) {
        const bytes = yield* read(offset, length)
        const start = skipPartial ? bytes.indexOf(10) + 1 : 0
        if (skipPartial && start === 0) {
          if (bytes.length < length) return undefined // no line starts before the end of the file
          continue
        }
        const item = probe(session, bytes.subarray(start), offset + start, skipPartial)
        if (item !== undefined) return { start: offset + start, item }
        if (bytes.length < length) return undefined
      }
      return undefined
    })
    const head = yield* lineAt(0, false)
    if (head?.item._tag !== "Header") return undefined
    let lo: SessionFile.Position = { offset: head.item.end, line: 2, seq: 0 }
    let hi = size
    let hiSeq: number | undefined
    // Interpolation search: lines are of similar sizes, so a seq's offset is near its share of the
    // file. Each guess that doesn't halve the interval is followed by a plain bisection step.
    let bisectNext = false
    while (hi - lo.offset > probeBytes) {
      const width = hi - lo.offset
      let guess: number
      if (hiSeq === undefined) {
        guess = Math.max(lo.offset, size - probeBytes) // first, the tail: it anchors the interpolation
      } else if (bisectNext) {
        guess = lo.offset + Math.floor(width / 2)
      } else {
        const share = (fromSeq - lo.seq) / Math.max(1, hiSeq - lo.seq)
        guess = lo.offset + Math.min(width - 1, Math.max(0, Math.floor(share * width) - 256))
      }
      const found = yield* lineAt(guess, true)
      if (found === undefined || found.start >= hi) {
        if (hiSeq === undefined) return undefined
        hi = guess // no whole line begins between `guess` and `hi`: look earlier
        bisectNext = false
        continue
      }
      if (found.item._tag !== "Entry") return undefined
      if (found.item.entry.seq <= fromSeq) {
        lo = { offset: found.start, line: found.item.entry.seq + 2, seq: found.item.entry.seq }
      } else {
        hi = found.start
        hiSeq = found.item.entry.seq
      }
      if (hiSeq === undefined) hiSeq = found.item.entry.seq + 1 // the tail probe landed at or before `fromSeq`
      bisectNext = hi - lo.offset > width / 2
    }
    return lo
  })).pipe(Effect.catch(() => Effect.succeed(undefined)))

/** Where a whole scan ends: the position after the last complete line, and the torn tail's size. */
const scanToEnd = (
  fs: FileSystem.FileSystem,
  path: string,
  session: SessionId.SessionId,
  method = "read"
) =>
  Stream.runFold(
    scan(fs, path, session, SessionFile.start, method),
    () => ({ header: false, end: SessionFile.start, tail: 0 }),
    (acc, item) => {
      switch (item._tag) {
        case "Header":
          return { header: true, end: { offset: item.end, line: 2, seq: 0 }, tail: 0 }
        case "Entry":
          return { header: true, end: { offset: item.end, line: item.line + 1, seq: item.entry.seq + 1 }, tail: 0 }
        case "Tail":
          return { ...acc, tail: item.length }
        case "Damage":
          return acc
      }
    }
  )

const syncDirectory = (fs: FileSystem.FileSystem, directory: string) =>
  Effect.scoped(Effect.flatMap(fs.open(directory, { flag: "r" }), (dir) => dir.sync))

/**
 * Brings a session file to a clean end, for appending: creates it with its header if it is missing
 * (or was left without a durable header by a crash), and cuts a torn tail. Answers where the next
 * entry goes and what was found. Only the lock holder may call this.
 */
const prepare = Effect.fnUntraced(function*(
  fs: FileSystem.FileSystem,
  directory: string,
  file: string,
  session: SessionId.SessionId,
  method: string
) {
  const exists = yield* fs.exists(file).pipe(Effect.mapError(storageFailure(method, session, file)))
  const found = exists ? yield* scanToEnd(fs, file, session, method) : undefined
  if (found === undefined || !found.header) {
    // New, or created by a crash before its header was durable: nothing in it was acknowledged.
    const header = SessionFile.headerLine(session, yield* Clock.currentTimeMillis)
    yield* Effect.scoped(Effect.gen(function*() {
      const handle = yield* fs.open(file, { flag: "w" })
      yield* handle.writeAll(header)
      yield* handle.sync
    })).pipe(
      Effect.andThen(syncDirectory(fs, directory)),
      Effect.mapError(storageFailure(method, session, `can't create ${file}`))
    )
    const end: SessionFile.Position = { offset: header.length, line: 2, seq: 0 }
    return { end, opened: { entries: 0, repairedBytes: found?.tail ?? 0 } }
  }
  if (found.tail > 0) {
    yield* fs.truncate(file, found.end.offset).pipe(
      Effect.andThen(Effect.scoped(Effect.flatMap(fs.open(file, { flag: "r+" }), (h) => h.sync))),
      Effect.mapError(storageFailure(method, session, `can't truncate the torn tail of ${file}`))
    )
  }
  return { end: found.end, opened: { entries: found.end.seq, repairedBytes: found.tail } }
})

const lockPath = (path: Path.Path, directory: string, session: SessionId.SessionId) =>
  path.join(directory, `${session}.lock`)

/**
 * Takes a session's lock for a moment and cuts its torn tail, if it has one: what opening it for
 * appending would do, for tools that only check logs. Fails with `Locked` while a process appends.
 */
export const repair = (
  options: Options,
  session: SessionId.SessionId
): Effect.Effect<Opened, SessionLogError, FileSystem.FileSystem | Path.Path> =>
  Effect.scoped(Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const directory = path.resolve(options.directory)
    yield* SessionLock.acquire(fs, lockPath(path, directory, session), session)
    const { opened } = yield* prepare(fs, directory, path.join(directory, SessionFile.fileName(session)), session, "repair")
    return opened
  }))

const encoder = new TextEncoder()

/** Recovery's I/O failures, as the log's own error. */
const recoveryFailure = <A, R>(effect: Effect.Effect<A, SessionLogError | PlatformError.PlatformError, R>) =>
  Effect.catchTag(effect, "PlatformError", (error) => Effect.fail(storageFailure("recover", "*", "recovering")(error)))

/**
 * Replays a dead journal's batches for one session into its file, under the session's lock. A batch
 * already in the file byte for byte is left alone, so replaying twice changes nothing; from the first
 * batch that isn't, the file is cut and rewritten from the journal.
 */
const replaySession = Effect.fnUntraced(function*(
  fs: FileSystem.FileSystem,
  file: string,
  session: SessionId.SessionId,
  records: ReadonlyArray<SessionJournal.Record>
) {
  const damaged = (detail: string) =>
    SessionLogError.fromReason({ method: "recover", session, reason: new Corrupt({ detail: `${file}: ${detail}` }) })
  // In journal order: each batch must start where the one before it ends.
  for (let i = 1; i < records.length; i++) {
    if (records[i]!.offset !== records[i - 1]!.offset + records[i - 1]!.bytes.length) {
      return yield* damaged("the journal's batches for it are not contiguous")
    }
  }
  const first = records[0]!.offset
  const size = (yield* fs.exists(file)) ? Number((yield* fs.stat(file)).size) : -1
  if (size < first) return yield* damaged(`it ends at byte ${size}, before the journal's first batch (${first})`)
  const expected = new Uint8Array(records.reduce((n, b) => n + b.bytes.length, 0))
  let at = 0
  for (const batch of records) {
    expected.set(batch.bytes, at)
    at += batch.bytes.length
  }
  const present = yield* Effect.scoped(Effect.flatMap(fs.open(file, { flag: "r" }), (handle) =>
    handle.readAlloc(expected.length, { position: BigInt(first) })))
  const actual = present._tag === "Some" ? present.value : new Uint8Array(0)
  let same = actual.length === expected.length
  for (let i = 0; same && i < expected.length; i++) same = actual[i] === expected[i]
  if (same) return
  yield* fs.truncate(file, first)
  yield* Effect.scoped(Effect.gen(function*() {
    const handle = yield* fs.open(file, { flag: "a" })
    yield* handle.writeAll(expected)
    yield* handle.sync
  }))
}, recoveryFailure)

/** The journals in a directory whose process is gone, oldest first. */
const deadJournals = Effect.fnUntraced(function*(fs: FileSystem.FileSystem, path: Path.Path, directory: string) {
  const names = yield* fs.readDirectory(directory)
  const journals: Array<{ readonly path: string; readonly parsed: SessionJournal.Parsed }> = []
  for (const name of names) {
    if (!name.startsWith(SessionJournal.prefix) || !name.endsWith(SessionJournal.extension)) continue
    const owner = SessionJournal.pidOf(name)
    if (owner !== undefined && SessionLock.isAlive(owner)) continue
    const journalPath = path.join(directory, name)
    const bytes = yield* fs.readFile(journalPath).pipe(Effect.catchTag("PlatformError", () => Effect.succeed(undefined)))
    if (bytes === undefined) continue
    const parsed = SessionJournal.parse(bytes)
    if (parsed === undefined) {
      // Its header is synced before any batch is written: without one, it never acknowledged anything.
      if (owner !== undefined) yield* fs.remove(journalPath).pipe(Effect.ignore)
      continue
    }
    if (SessionLock.isAlive(parsed.pid)) continue
    if (parsed.stoppedAt !== undefined) {
      yield* Effect.logWarning(`SessionLogFile: ${journalPath} ends in ${parsed.stoppedAt} (a batch never acknowledged)`)
    }
    journals.push({ path: journalPath, parsed })
  }
  return journals.sort((a, b) => a.parsed.created - b.parsed.created)
}, recoveryFailure)

/**
 * Replays every dead journal in the directory into the session files it covers, each under its
 * session's lock, and deletes the journals that are then fully in their files. A session whose lock a
 * live process holds was replayed by that process when it took the session over.
 */
const recoverAll = Effect.fnUntraced(function*(fs: FileSystem.FileSystem, path: Path.Path, directory: string) {
  for (const journal of yield* deadJournals(fs, path, directory)) {
    let complete = true
    const sessions = [...new Set(journal.parsed.records.map((record) => record.session))]
    for (const session of sessions) {
      const records = journal.parsed.records.filter((record) => record.session === session)
      const replayed = yield* Effect.exit(Effect.scoped(Effect.andThen(
        SessionLock.acquire(fs, lockPath(path, directory, session), session),
        replaySession(fs, path.join(directory, SessionFile.fileName(session)), session, records)
      )))
      if (replayed._tag === "Failure") {
        const error = Cause.squash(replayed.cause)
        const locked = error instanceof SessionLogError && error.reason._tag === "Locked"
        if (!locked) {
          complete = false
          yield* Effect.logError(`SessionLogFile: can't replay ${journal.path} into ${session}: ${Cause.pretty(replayed.cause)}`)
        }
      }
    }
    if (complete) yield* fs.remove(journal.path).pipe(Effect.ignore)
  }
})

interface JournalChunk {
  readonly session: SessionId.SessionId
  readonly file: FileSystem.File
  readonly offset: number
  /** The batch's lines, as written to the session file. */
  readonly bytes: Uint8Array
  readonly done: Deferred.Deferred<void, PlatformError.PlatformError | SessionLogError>
}

/**
 * This instance's journal: a committer fiber takes every batch that session writers hand it, writes
 * them with one write and makes them durable with one fsync, then answers them all. Once a journal
 * holds `checkpointBytes`, a new one takes over at once, and in the background the session files the
 * old one covers are fsynced and the old one is removed: appends never wait for a checkpoint.
 */
const makeJournal = Effect.fnUntraced(function*(
  fs: FileSystem.FileSystem,
  path: Path.Path,
  directory: string,
  scope: Scope.Scope,
  options: { readonly checkpointBytes: number }
) {
  interface Generation {
    readonly path: string
    readonly file: FileSystem.File
    readonly headerSize: number
    size: number
    /** The session files with batches in this journal: synced before it may go. */
    readonly dirty: Set<FileSystem.File>
    readonly scope: Scope.Closeable
  }
  const generations = new Set<Generation>()

  const openGeneration = Effect.gen(function*() {
    const journalPath = path.join(directory, SessionJournal.fileName(process.pid, crypto.randomUUID()))
    const header = SessionJournal.headerLine(process.pid, yield* Clock.currentTimeMillis)
    const generationScope = yield* Scope.fork(scope)
    const file = yield* Effect.gen(function*() {
      const file = yield* fs.open(journalPath, { flag: "w" }).pipe(Scope.provide(generationScope))
      yield* file.writeAll(header)
      yield* file.sync
      yield* syncDirectory(fs, directory)
      return file
    }).pipe(Effect.onError(() => Effect.andThen(Scope.close(generationScope, Exit.void), Effect.ignore(fs.remove(journalPath)))))
    const generation: Generation = {
      path: journalPath,
      file,
      headerSize: header.length,
      size: header.length,
      dirty: new Set(),
      scope: generationScope
    }
    generations.add(generation)
    return generation
  })

  /** Removes a journal whose batches are all durable in their session files. */
  const retire = (generation: Generation) =>
    Effect.gen(function*() {
      yield* Effect.forEach([...generation.dirty], (f) => f.sync, { concurrency: "unbounded", discard: true })
      generation.dirty.clear()
      // Forgotten only once gone: if this is cut short, closing the log removes it.
      yield* fs.remove(generation.path)
      generations.delete(generation)
      yield* Scope.close(generation.scope, Exit.void)
      yield* syncDirectory(fs, directory)
    }).pipe(Effect.catch((error) =>
      Effect.logWarning(`SessionLogFile: ${generation.path} kept: ${error.message}; it is removed on close`)
    ))

  let current = yield* openGeneration
  let broken: SessionLogError | undefined
  const queue = yield* Queue.unbounded<JournalChunk>()

  const journalFailure = (detail: string) =>
    SessionLogError.fromReason({ method: "append", session: "*", reason: new StorageFailure({ detail }) })

  const commitBatch = (batch: ReadonlyArray<JournalChunk>) =>
    Effect.gen(function*() {
      if (broken !== undefined) {
        for (const chunk of batch) yield* Deferred.fail(chunk.done, broken)
        return
      }
      const generation = current
      const parts: Array<Uint8Array> = []
      let length = 0
      for (const chunk of batch) {
        const header = encoder.encode(SessionJournal.recordHeader(chunk.session, chunk.offset, chunk.bytes.length))
        parts.push(header, chunk.bytes)
        length += header.length + chunk.bytes.length
      }
      const bytes = new Uint8Array(length)
      let at = 0
      for (const part of parts) {
        bytes.set(part, at)
        at += part.length
      }
      const written = yield* Effect.exit(Effect.andThen(generation.file.writeAll(bytes), generation.file.sync))
      if (written._tag === "Failure") {
        // Cut the failed batch, so later batches don't follow bytes that end the journal's valid part.
        const cut = yield* Effect.exit(Effect.andThen(generation.file.truncate(generation.size), generation.file.sync))
        const error = journalFailure(`write to ${generation.path} failed: ${Cause.pretty(written.cause)}`)
        if (cut._tag === "Failure") broken = journalFailure(`${generation.path} can't be repaired after a failed write`)
        for (const chunk of batch) yield* Deferred.fail(chunk.done, error)
        return
      }
      generation.size += bytes.length
      for (const chunk of batch) generation.dirty.add(chunk.file)
      for (const chunk of batch) yield* Deferred.succeed(chunk.done, undefined)
      if (generation.size >= options.checkpointBytes) {
        const next = yield* Effect.exit(openGeneration)
        if (next._tag === "Success") {
          current = next.value
          yield* Effect.forkIn(retire(generation), scope)
        } else {
          yield* Effect.logWarning(`SessionLogFile: no new journal, checkpoint postponed: ${Cause.pretty(next.cause)}`)
        }
      }
    })

  // On close, after every writer has synced its file, journals with nothing left to cover go.
  yield* Scope.addFinalizer(scope, Effect.suspend(() =>
    Effect.forEach([...generations], (generation) =>
      generation.dirty.size === 0
        ? Effect.andThen(fs.remove(generation.path), syncDirectory(fs, directory)).pipe(Effect.ignore)
        : Effect.void, { discard: true })))
  yield* Queue.takeAll(queue).pipe(Effect.flatMap(commitBatch), Effect.forever, Effect.forkIn(scope))

  return {
    /** Makes a batch already written to its session file durable: answers once the journal is synced. */
    commit: (chunk: Omit<JournalChunk, "done">) =>
      Effect.flatMap(Deferred.make<void, PlatformError.PlatformError | SessionLogError>(), (done) =>
        Effect.andThen(Queue.offer(queue, { ...chunk, done }), Deferred.await(done))),
    /** A writer closing: its file's journaled batches become durable in the file itself. */
    release: (f: FileSystem.File) =>
      Effect.andThen(f.sync, Effect.sync(() => generations.forEach((generation) => generation.dirty.delete(f)))).pipe(
        Effect.ignore
      )
  }
})

export const layerFileSystem = (
  options: Options
): Layer.Layer<SessionLog, PlatformError.PlatformError | SessionLogError, FileSystem.FileSystem | Path.Path> =>
  Layer.effect(
    SessionLog,
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      const directory = path.resolve(options.directory)
      yield* fs.makeDirectory(directory, { recursive: true })
      const layerScope = yield* Effect.scope
      const pubsub = yield* Effect.acquireRelease(PubSub.unbounded<SessionEvent.Committed>(), PubSub.shutdown)
      const writers = new Map<SessionId.SessionId, Writer>()
      const opening = yield* Semaphore.make(1)

      const fileOf = (session: SessionId.SessionId) => path.join(directory, SessionFile.fileName(session))

      // Acknowledged appends a dead process left only in its journal go into their files first.
      yield* recoverAll(fs, path, directory)

      /** Replays what dead journals hold for a session whose lock this process holds. */
      const recoverSession = (session: SessionId.SessionId) =>
        Effect.gen(function*() {
          for (const journal of yield* deadJournals(fs, path, directory)) {
            const records = journal.parsed.records.filter((record) => record.session === session)
            if (records.length > 0) yield* replaySession(fs, fileOf(session), session, records)
          }
        })

      const journal = options.journal === undefined || options.journal === false
        ? undefined
        : yield* makeJournal(fs, path, directory, layerScope, {
          checkpointBytes: (typeof options.journal === "object" ? options.journal.checkpointBytes : undefined) ??
            4 * 1024 * 1024
        })

      const commit = (session: SessionId.SessionId, writer: Writer, batch: ReadonlyArray<Pending>) =>
        Effect.gen(function*() {
          const time = yield* Clock.currentTimeMillis
          const start = writer.end
          let text = ""
          for (let i = 0; i < batch.length; i++) {
            text += SessionFile.entryLine(batch[i]!.type, start.seq + i, time, batch[i]!.json)
          }
          const bytes = SessionFile.encodeLines(text)
          const durable = journal === undefined
            ? writer.file.sync
            : journal.commit({ session, file: writer.file, offset: start.offset, bytes })
          const written = yield* Effect.exit(Effect.andThen(writer.file.writeAll(bytes), durable))
          if (Exit.isFailure(written)) {
            // Cut what may have reached the file, so the unacknowledged batch can't resurface.
            const cut = yield* Effect.exit(
              Effect.andThen(writer.file.truncate(start.offset), writer.file.sync)
            )
            if (Exit.isFailure(cut)) {
              const recovered = yield* Effect.exit(prepare(fs, directory, fileOf(session), session, "append"))
              if (Exit.isSuccess(recovered)) writer.end = recovered.value.end
            }
            const error = SessionLogError.fromReason({
              method: "append",
              session,
              reason: new StorageFailure({ detail: `write to ${fileOf(session)} failed: ${Cause.pretty(written.cause)}` })
            })
            for (const pending of batch) yield* Deferred.fail(pending.done, error)
            return
          }
          writer.end = {
            offset: start.offset + bytes.length,
            line: start.line + batch.length,
            seq: start.seq + batch.length
          }
          const committed = batch.map((pending, i) => ({
            session,
            entry: makeEntry(pending.type, start.seq + i, time, pending.copy)
          }))
          // Publish before acknowledging, so whoever subscribes after an append returns never sees it.
          yield* PubSub.publishAll(pubsub, committed)
          for (let i = 0; i < batch.length; i++) yield* Deferred.succeed(batch[i]!.done, committed[i]!.entry)
        })

      const openWriter = (session: SessionId.SessionId) =>
        opening.withPermit(Effect.suspend(() => {
          const existing = writers.get(session)
          if (existing !== undefined) return Effect.succeed(existing)
          return Effect.gen(function*() {
            // The writer lives as long as the layer: its lock, handle and fiber close with it.
            const scope = yield* Scope.fork(layerScope)
            const opened = yield* Effect.gen(function*() {
              yield* SessionLock.acquire(fs, lockPath(path, directory, session), session)
              // A process that died holding this session may have left acknowledged appends in its journal.
              yield* recoverSession(session)
              const { end } = yield* prepare(fs, directory, fileOf(session), session, "append")
              const file = yield* fs.open(fileOf(session), { flag: "a" }).pipe(
                Effect.mapError(storageFailure("append", session, `can't open ${fileOf(session)}`))
              )
              if (journal !== undefined) {
                // Closing: what the journal holds for this file becomes durable in the file itself.
                yield* Effect.addFinalizer(() => journal.release(file))
              }
              const queue = yield* Effect.acquireRelease(Queue.unbounded<Pending>(), Queue.shutdown)
              const writer: Writer = { file, queue, end }
              yield* Queue.takeAll(queue).pipe(
                Effect.flatMap((batch) => commit(session, writer, batch)),
                Effect.forever,
                Effect.forkIn(scope)
              )
              return writer
            }).pipe(Scope.provide(scope), Effect.onError(() => Scope.close(scope, Exit.void)))
            writers.set(session, opened)
            return opened
          })
        }))

      const append = Effect.fn("SessionLogFile.append")(
        function*(session: SessionId.SessionId, type: string, data: unknown) {
          const { copy, json } = yield* encodePayload("append", session, data)
          const writer = writers.get(session) ?? (yield* openWriter(session))
          const done = yield* Deferred.make<SessionEvent.Entry, SessionLogError>()
          yield* Queue.offer(writer.queue, { type, json, copy, done })
          return yield* Deferred.await(done)
        }
      )

      const read = (session: SessionId.SessionId, readOptions?: ReadOptions) =>
        Stream.unwrap(Effect.gen(function*() {
          const fromSeq = readOptions?.fromSeq ?? 0
          // While this process holds the session's lock, its writer knows where the committed end is
          // and no one else can add to it: a read from there has nothing to read. A read from any
          // other late seq bisects to it.
          const writer = writers.get(session)
          if (writer !== undefined && fromSeq >= writer.end.seq) return Stream.empty
          const file = fileOf(session)
          const exists = yield* fs.exists(file).pipe(Effect.mapError(storageFailure("read", session, file)))
          if (!exists) return Stream.empty
          const from = fromSeq > 0
            ? (yield* locate(fs, file, session, fromSeq)) ?? SessionFile.start
            : SessionFile.start
          // Lines of a batch still being written and synced are not committed yet: a read ends at
          // the committed end this process knows, so it never shows what a crash could still undo.
          const committedEnd = writer?.end.seq ?? Number.POSITIVE_INFINITY
          return scan(fs, file, session, from).pipe(
            Stream.filter((item) => item._tag === "Entry" && item.entry.seq >= fromSeq),
            Stream.map((item) => (item as Extract<SessionFile.Item, { _tag: "Entry" }>).entry),
            Stream.takeWhile((entry) => entry.seq < committedEnd)
          )
        }))

      const sessions = fs.readDirectory(directory).pipe(
        Effect.map((names) =>
          names
            .filter((name) => name.endsWith(SessionFile.extension))
            .map((name) => name.slice(0, -SessionFile.extension.length))
            .filter(SessionId.is)
            .sort()
        ),
        Effect.mapError(storageFailure("sessions", "*", `can't list ${directory}`))
      )

      return SessionLog.of({
        append,
        read,
        subscribe: Effect.map(PubSub.subscribe(pubsub), Stream.fromSubscription),
        sessions
      })
    })
  )
