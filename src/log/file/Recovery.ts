/**
 * Recovery in journal mode: a process that died holding sessions may have acknowledged appends that
 * are in its journal but not yet durable in the session files. Replaying a dead journal into a
 * session file is idempotent: each run of batches is written where it goes, over the same bytes if
 * they are there, and synced, and nothing after it is cut (what follows may be durable appends whose
 * journal is gone: a checkpoint synced them). Bytes that read back the same are rewritten all the
 * same: they may be the page cache's, never written back (the process died before a checkpoint), or
 * pages whose write-back failed and was reported to a sync that no longer matters; a sync alone would
 * not write them.
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import type * as FileSystem from "effect/FileSystem"
import type * as Path from "effect/Path"
import * as StorageFailures from "../internal/storageFailure.ts"
import { Corrupt, Locked } from "../SessionLogError.ts"
import * as Format from "./Format.ts"
import * as Journal from "./Journal.ts"
import * as Lock from "./Lock.ts"
import * as Owner from "./Owner.ts"
import * as RegularFile from "./RegularFile.ts"

/**
 * Replays one run of a dead journal's batches for a session (each starting where the one before it
 * ends) into its file; the caller holds the session's lock.
 */
export const replaySession = Effect.fnUntraced(function*(
  fs: FileSystem.FileSystem,
  file: string,
  records: ReadonlyArray<Journal.Record>
) {
  const damaged = (detail: string) => Effect.fail(new Corrupt({ detail: `${file}: ${detail}` }))
  for (let i = 1; i < records.length; i++) {
    if (records[i]!.offset !== records[i - 1]!.offset + records[i - 1]!.bytes.length) {
      return yield* damaged("the journal's batches for it are not contiguous")
    }
  }
  const first = records[0]!.offset
  if (!(yield* RegularFile.exists(fs, file))) return yield* damaged(`it is missing, and the journal has batches for it from byte ${first}`)
  yield* Effect.scoped(Effect.gen(function*() {
    const handle = yield* RegularFile.open(fs, file, "r+")
    const size = Number((yield* handle.stat).size)
    if (size < first) return yield* damaged(`it ends at byte ${size}, before the journal's first batch (${first})`)
    yield* handle.seek(BigInt(first), "start")
    yield* handle.writeAll(Format.concat(records.map((record) => record.bytes)))
    yield* handle.sync
  }))
})

/** A journal whose process is gone, parsed. */
export interface Dead {
  readonly path: string
  readonly parsed: Journal.Parsed
}

/** A journal's header says which process owns it; it is read in full only once that process is gone. */
const headBytes = 4096

/** The journals in a directory whose process is gone, oldest first by their clocks (see `runsOf`). */
export const deadJournals = Effect.fnUntraced(function*(fs: FileSystem.FileSystem, path: Path.Path, directory: string) {
  const names = yield* fs.readDirectory(directory)
  const journals: Array<Dead> = []
  // A link or anything but a regular file is no journal this log wrote: skipped. One gone since the
  // listing was removed by its process or replayed and removed by another's recovery: nothing to do.
  // One that can't be read may be a dead process's, holding acknowledged appends, and appending
  // without them could go where they belong: the recovery fails, saying so, its error the cause.
  const read = (journalPath: string, limit: number, why: string) =>
    RegularFile.read(fs, journalPath, limit).pipe(
      Effect.catchTag("UnsafePath", (error) =>
        Effect.as(Effect.logWarning(`SessionLogFile: ${journalPath} skipped: ${error.detail}`), undefined)),
      Effect.catchReason("PlatformError", "NotFound", () => Effect.succeed(undefined)),
      Effect.mapError((error) =>
        StorageFailures.reworded(
          error,
          (said) =>
            `the journal ${journalPath} can't be read (${said})${why}: the appends it may have acknowledged can't be replayed, and appending without them could go where they belong; make it readable (or remove it, giving them up)`
        )
      )
    )
  for (const name of names) {
    if (!name.startsWith(Journal.prefix) || !name.endsWith(Journal.extension)) continue
    const owner = Journal.pidOf(name)
    const journalPath = path.join(directory, name)
    if (owner !== undefined && Owner.pidExists(owner)) {
      // A process with that pid runs: the journal is live unless its header names another process
      // that had the pid before (a pid reused after a crash).
      const head = yield* read(journalPath, headBytes, ", so whether its process is gone can't be told")
      const header = head === undefined ? undefined : Journal.parse(head)
      if (header?.owner.started === undefined || (yield* Owner.isAlive(fs, header.owner))) continue
    }
    const bytes = yield* read(journalPath, Number.MAX_SAFE_INTEGER, ", and its process is gone")
    if (bytes === undefined) continue
    const parsed = Journal.parse(bytes)
    if (parsed === undefined) {
      // Its header is synced before any batch is written: without one, it never acknowledged anything.
      if (owner !== undefined) yield* fs.remove(journalPath).pipe(Effect.ignore)
      continue
    }
    if (yield* Owner.isAlive(fs, parsed.owner)) continue
    if (parsed.stoppedAt !== undefined) {
      yield* Effect.logWarning(`SessionLogFile: ${journalPath} ends in ${parsed.stoppedAt} (a batch never acknowledged)`)
    }
    journals.push({ path: journalPath, parsed })
  }
  return journals.sort((a, b) => a.parsed.created - b.parsed.created)
})

/**
 * What dead journals hold for one session, as runs of batches, each starting where the one before it
 * ends, in the order they were written: by where they go in the session file. A journal's batches
 * for a session run on from one another while one process appends to it; they break where another
 * process held the session meanwhile (its writer closed idle, and taken back later). The journals'
 * `created` stamps can't order them: they are wall-clock times, which tie (two journals opened in
 * the same millisecond) or step back (a clock set back). Runs at the same offset stay in `created`
 * order, the later replayed last.
 */
const runsOf = (journals: ReadonlyArray<Dead>, session: string): ReadonlyArray<ReadonlyArray<Journal.Record>> => {
  const runs: Array<Array<Journal.Record>> = []
  for (const journal of journals) {
    let run: Array<Journal.Record> | undefined
    for (const record of journal.parsed.records) {
      if (record.session !== session) continue
      const last = run?.at(-1)
      if (run !== undefined && last !== undefined && record.offset === last.offset + last.bytes.length) run.push(record)
      else runs.push(run = [record])
    }
  }
  return runs.sort((a, b) => a[0]!.offset - b[0]!.offset)
}

/** Replays what dead journals hold for one session into its file; the caller holds the session's lock. */
const replayAll = (fs: FileSystem.FileSystem, path: Path.Path, directory: string, journals: ReadonlyArray<Dead>, session: string) =>
  Effect.forEach(
    runsOf(journals, session),
    (records) => replaySession(fs, path.join(directory, Format.fileName(session)), records),
    { discard: true }
  )

/** Replays what dead journals hold for one session; the caller holds the session's lock. */
export const recoverSession = Effect.fnUntraced(function*(
  fs: FileSystem.FileSystem,
  path: Path.Path,
  directory: string,
  session: string
) {
  yield* replayAll(fs, path, directory, yield* deadJournals(fs, path, directory), session)
})

/**
 * Replays every dead journal in the directory into the session files it covers, each under its
 * session's lock, and deletes the journals that are then fully in their files. A session whose lock a
 * live process holds was replayed by that process when it took the session over.
 */
export const recoverAll = Effect.fnUntraced(function*(
  fs: FileSystem.FileSystem,
  path: Path.Path,
  directory: string,
  self: Owner.Owner
) {
  const journals = yield* deadJournals(fs, path, directory)
  const kept = new Set<Dead>()
  const sessions = new Set(journals.flatMap((journal) => journal.parsed.records.map((record) => record.session)))
  for (const session of sessions) {
    const replayed = yield* Effect.exit(Effect.scoped(Effect.andThen(
      Lock.acquire(fs, path.join(directory, Format.lockName(session)), self),
      replayAll(fs, path, directory, journals, session)
    )))
    if (replayed._tag === "Failure") {
      // A live holder replays the journals itself when it takes the session over, but it may not
      // have read them yet: a journal stays until every session it covers has been replayed here.
      for (const journal of journals) if (journal.parsed.records.some((record) => record.session === session)) kept.add(journal)
      if (!(Cause.squash(replayed.cause) instanceof Locked)) {
        yield* Effect.logError(`SessionLogFile: can't replay the journals of ${session}: ${Cause.pretty(replayed.cause)}`)
      }
    }
  }
  for (const journal of journals) if (!kept.has(journal)) yield* fs.remove(journal.path).pipe(Effect.ignore)
})
