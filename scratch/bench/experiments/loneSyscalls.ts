/**
 * A probe for the lone append's gap to its baselines: what of it is system calls, and what the code
 * around them. One process, in rounds of 25 interleaved (as `durableAppend`'s latency rows), on the
 * disk under `[directory-root]` (default: the current directory):
 *
 * - `write+fsync`, `sqlite`: the benchmark's baselines (a bare append; `node:sqlite`'s insert, WAL,
 *   `synchronous=FULL`);
 * - `file calls`, `journal calls`: the lone append's own system calls alone, bare, their bytes made
 *   before the clock starts: the lock's `lstat`, the session file's write, its fsync (or the journal
 *   record's write in place and the journal's fdatasync), then the check after it (`readlink` of the
 *   descriptor and a read of the last byte, `Blocking.stillAt`);
 * - `file append`, `journal append`: the same through `SessionLogFile`, checked as the tool uses it.
 *
 * With `pause` (ms, default 0), each append waits that long after it, as an agent does between tool
 * calls: the code then runs cold after each wait (on a tmpfs, 0.25 ms apart, the append's own time over its
 * calls grew by 11-15 µs on this 2-vCPU VM; see the bench README, stop 30).
 * Each row warms up for 2,000 appends first (80 rounds, uncounted), as `durableAppend`'s latency rows do.
 * Run: `npx node scratch/bench/experiments/loneSyscalls.ts [directory-root] [rounds] [pause]`.
 */
import { NodeServices } from "@effect/platform-node"
import { Effect, Layer, ManagedRuntime } from "effect"
import {
  closeSync,
  fdatasyncSync,
  fsyncSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readlinkSync,
  readSync,
  rmSync,
  writeFileSync,
  writeSync
} from "node:fs"
import { join } from "node:path"
import { DatabaseSync } from "node:sqlite"
import { CheckedSessionLog } from "../../../src/log/CheckedSessionLog.ts"
import * as Format from "../../../src/log/file/Format.ts"
import * as SessionLogFile from "../../../src/log/file/SessionLogFile.ts"
import * as SessionId from "../../../src/log/SessionId.ts"
import * as TodoEvents from "../../../src/todo/TodoEvents.ts"
import { todoWritePayload as payload } from "../fixtures.ts"

const json = JSON.stringify(payload)
const root = mkdtempSync(join(process.argv[2] ?? process.cwd(), ".lone-syscalls-"))
const rounds = Number(process.argv[3] ?? 80)
const warmUpRounds = 80
const pause = Number(process.argv[4] ?? 0)
const nap = new Int32Array(new SharedArrayBuffer(4))
const id = SessionId.decodeSync("lone")
const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!
const statOptions = { throwIfNoEntry: false } as const
const journalBytes = 16 * 1024 * 1024

let seq = 0
const line = () => Format.entryLine("todo/write", seq++, 0, json)
const lineBytes = () => Buffer.from(line())

/** A session file, its lock and a journal written ahead with zeros, as the log keeps them. */
const bareFiles = (name: string) => {
  const directory = join(root, name)
  mkdirSync(directory)
  writeFileSync(join(directory, "lone.lock"), String(process.pid))
  const journal = openSync(join(directory, "journal.wal"), "w+")
  writeSync(journal, new Uint8Array(journalBytes))
  fsyncSync(journal)
  return { lock: join(directory, "lone.lock"), fd: openSync(join(directory, "lone.jsonl"), "a+"), journal, end: 0, at: 0 }
}
const stillAt = (fd: number, end: number) => {
  readlinkSync(`/proc/self/fd/${fd}`)
  readSync(fd, new Uint8Array(2), 0, 2, end - 1)
}
// Set up inside `try`, so that the directory goes whatever fails.
let fileCalls: ReturnType<typeof bareFiles> | undefined
let journalCalls: ReturnType<typeof bareFiles> | undefined
let bareFd = -1
let lite: DatabaseSync | undefined
let insert: ReturnType<DatabaseSync["prepare"]>
let logs: { readonly file: ReturnType<typeof logOf>; readonly journal: ReturnType<typeof logOf> } | undefined
const setUp = () => {
  fileCalls = bareFiles("file-calls")
  journalCalls = bareFiles("journal-calls")
  bareFd = openSync(join(root, "bare.jsonl"), "a")
  lite = new DatabaseSync(join(root, "lite.sqlite"))
  lite.exec("PRAGMA journal_mode=WAL")
  lite.exec("PRAGMA synchronous=FULL")
  lite.exec("CREATE TABLE events (session TEXT NOT NULL, seq INTEGER NOT NULL, type TEXT NOT NULL, time INTEGER NOT NULL, data TEXT NOT NULL, PRIMARY KEY (session, seq))")
  insert = lite.prepare("INSERT INTO events VALUES (?, ?, ?, ?, ?)")
  logs = { file: logOf(false), journal: logOf(true) }
}

const logOf = (journal: boolean) =>
  ManagedRuntime.make(
    TodoEvents.layerChecked.pipe(
      Layer.provide(SessionLogFile.layerFileSystem({ directory: join(root, journal ? "journal-log" : "file-log"), journal })),
      Layer.provide(NodeServices.layer)
    )
  )

const files = () => ({ file: fileCalls!, journal: journalCalls! })

// Each row's work for one append; what it returns is timed (the `calls` rows' bytes are made before).
const plain: Record<string, () => () => void> = {
  "write+fsync": () => () => {
    // As `durableAppend`'s baseline: the line made inside the clock.
    writeSync(bareFd, line())
    fsyncSync(bareFd)
  },
  sqlite: () => () => {
    insert.run("lone", seq++, "todo/write", 0, json)
  },
  "file calls": () => {
    const bytes = lineBytes()
    const fileCalls = files().file
    return () => {
      lstatSync(fileCalls.lock, statOptions)
      writeSync(fileCalls.fd, bytes)
      fsyncSync(fileCalls.fd)
      fileCalls.end += bytes.length
      stillAt(fileCalls.fd, fileCalls.end)
    }
  },
  "journal calls": () => {
    const bytes = lineBytes()
    const journalCalls = files().journal
    // The record: the lines after a header of about 60 bytes.
    const record = new Uint8Array(bytes.length + 60)
    record.set(bytes, 60)
    // Within the zeros written ahead, as the log's records are: a journal that grew would sync its size too.
    if (journalCalls.at + record.length > journalBytes) journalCalls.at = 0
    return () => {
      lstatSync(journalCalls.lock, statOptions)
      writeSync(journalCalls.fd, bytes)
      journalCalls.end += bytes.length
      writeSync(journalCalls.journal, record, 0, record.length, journalCalls.at)
      journalCalls.at += record.length
      fdatasyncSync(journalCalls.journal)
      stillAt(journalCalls.fd, journalCalls.end)
    }
  }
}
const names = [...Object.keys(plain), "file append", "journal append"]
const times: Record<string, Array<number>> = Object.fromEntries(names.map((name) => [name, []]))

const roundOf = async (name: string, keep: boolean) => {
  const kept = times[name]!
  if (name.endsWith(" append")) {
    const runtime = name === "file append" ? logs!.file : logs!.journal
    await runtime.runPromise(Effect.gen(function*() {
      const log = yield* CheckedSessionLog
      for (let i = 0; i < 25; i++) {
        const t0 = process.hrtime.bigint()
        yield* log.append(id, "todo/write", payload)
        if (keep) kept.push(Number(process.hrtime.bigint() - t0) / 1000)
        if (pause > 0) Atomics.wait(nap, 0, 0, pause)
      }
    }))
    return
  }
  for (let i = 0; i < 25; i++) {
    const call = plain[name]!()
    const t0 = process.hrtime.bigint()
    call()
    if (keep) kept.push(Number(process.hrtime.bigint() - t0) / 1000)
    if (pause > 0) Atomics.wait(nap, 0, 0, pause)
  }
}

try {
  setUp()
  for (let round = 0; round < warmUpRounds + rounds; round++) {
    for (let i = 0; i < names.length; i++) await roundOf(names[(round + i) % names.length]!, round >= warmUpRounds)
  }
  const base = median(times["write+fsync"]!)
  const lites = median(times.sqlite!)
  for (const name of names) {
    const p50 = median(times[name]!)
    console.log(
      `${name.padEnd(15)} p50 ${p50.toFixed(0).padStart(4)} µs  ${(p50 / base).toFixed(2)}× write+fsync  ${(p50 / lites).toFixed(2)}× sqlite`
    )
  }
} finally {
  await logs?.file.dispose()
  await logs?.journal.dispose()
  for (const fd of [bareFd, fileCalls?.fd, fileCalls?.journal, journalCalls?.fd, journalCalls?.journal]) if (fd !== undefined && fd >= 0) closeSync(fd)
  lite?.close()
  rmSync(root, { recursive: true, force: true })
}
