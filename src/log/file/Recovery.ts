/**
 * Recovery in journal mode: a process that died holding sessions may have acknowledged appends that
 * are in its journal but not yet durable in the session files. Replaying a dead journal into a
 * session file is idempotent: a batch already in the file byte for byte is left alone; from the
 * first batch that isn't, the file is cut and rewritten from the journal.
 */
import { Cause, Effect, type FileSystem, type Path } from "effect"
import { Corrupt, Locked } from "../SessionLogError.ts"
import * as Format from "./Format.ts"
import * as Journal from "./Journal.ts"
import * as Lock from "./Lock.ts"

/** Replays a dead journal's batches for one session into its file; the caller holds the session's lock. */
export const replaySession = Effect.fnUntraced(function*(
  fs: FileSystem.FileSystem,
  file: string,
  records: ReadonlyArray<Journal.Record>
) {
  const damaged = (detail: string) => Effect.fail(new Corrupt({ detail: `${file}: ${detail}` }))
  // In journal order: each batch must start where the one before it ends.
  for (let i = 1; i < records.length; i++) {
    if (records[i]!.offset !== records[i - 1]!.offset + records[i - 1]!.bytes.length) {
      return yield* damaged("the journal's batches for it are not contiguous")
    }
  }
  const first = records[0]!.offset
  const size = (yield* fs.exists(file)) ? Number((yield* fs.stat(file)).size) : -1
  if (size < first) return yield* damaged(`it ends at byte ${size}, before the journal's first batch (${first})`)
  const expected = Format.concat(records.map((record) => record.bytes))
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
})

/** A journal whose process is gone, parsed. */
export interface Dead {
  readonly path: string
  readonly parsed: Journal.Parsed
}

/** The journals in a directory whose process is gone, oldest first. */
export const deadJournals = Effect.fnUntraced(function*(fs: FileSystem.FileSystem, path: Path.Path, directory: string) {
  const names = yield* fs.readDirectory(directory)
  const journals: Array<Dead> = []
  for (const name of names) {
    if (!name.startsWith(Journal.prefix) || !name.endsWith(Journal.extension)) continue
    const owner = Journal.pidOf(name)
    if (owner !== undefined && Lock.isAlive(owner)) continue
    const journalPath = path.join(directory, name)
    const bytes = yield* fs.readFile(journalPath).pipe(Effect.catchTag("PlatformError", () => Effect.succeed(undefined)))
    if (bytes === undefined) continue
    const parsed = Journal.parse(bytes)
    if (parsed === undefined) {
      // Its header is synced before any batch is written: without one, it never acknowledged anything.
      if (owner !== undefined) yield* fs.remove(journalPath).pipe(Effect.ignore)
      continue
    }
    if (Lock.isAlive(parsed.pid)) continue
    if (parsed.stoppedAt !== undefined) {
      yield* Effect.logWarning(`SessionLogFile: ${journalPath} ends in ${parsed.stoppedAt} (a batch never acknowledged)`)
    }
    journals.push({ path: journalPath, parsed })
  }
  return journals.sort((a, b) => a.parsed.created - b.parsed.created)
})

/** Replays what dead journals hold for one session; the caller holds the session's lock. */
export const recoverSession = Effect.fnUntraced(function*(
  fs: FileSystem.FileSystem,
  path: Path.Path,
  directory: string,
  session: string
) {
  for (const journal of yield* deadJournals(fs, path, directory)) {
    const records = journal.parsed.records.filter((record) => record.session === session)
    if (records.length > 0) yield* replaySession(fs, path.join(directory, Format.fileName(session)), records)
  }
})

/**
 * Replays every dead journal in the directory into the session files it covers, each under its
 * session's lock, and deletes the journals that are then fully in their files. A session whose lock a
 * live process holds was replayed by that process when it took the session over.
 */
export const recoverAll = Effect.fnUntraced(function*(fs: FileSystem.FileSystem, path: Path.Path, directory: string) {
  for (const journal of yield* deadJournals(fs, path, directory)) {
    let complete = true
    const sessions = [...new Set(journal.parsed.records.map((record) => record.session))]
    for (const session of sessions) {
      const records = journal.parsed.records.filter((record) => record.session === session)
      const replayed = yield* Effect.exit(Effect.scoped(Effect.andThen(
        Lock.acquire(fs, path.join(directory, Format.lockName(session))),
        replaySession(fs, path.join(directory, Format.fileName(session)), records)
      )))
      if (replayed._tag === "Failure" && !(Cause.squash(replayed.cause) instanceof Locked)) {
        complete = false
        yield* Effect.logError(`SessionLogFile: can't replay ${journal.path} into ${session}: ${Cause.pretty(replayed.cause)}`)
      }
    }
    if (complete) yield* fs.remove(journal.path).pipe(Effect.ignore)
  }
})
