import { assert, describe, it } from "@effect/vitest"
import { type ChildProcess, spawn } from "node:child_process"
import { join } from "node:path"
import { createInterface } from "node:readline"
import { Effect, FileSystem, PlatformError } from "effect"
import * as SessionFile from "../../../src/log/file/Format.ts"
import * as Recording from "./RecordingFileSystem.ts"
import * as Journal from "../../../src/log/file/Journal.ts"
import * as Owner from "../../../src/log/file/Owner.ts"
import { failureOf } from "../SessionLogConformance.ts"
import { failing, fileOf, open, openRaw, readAll, session, systemError, withDirectory } from "./FileTest.ts"
import { appender } from "../../support/Executables.ts"

const exited = (child: ChildProcess) =>
  Effect.promise(() => new Promise<void>((resolve) => child.exitCode !== null ? resolve() : child.once("exit", () => resolve())))

describe("Recovery", () => {
  it.live("a dead process's journal is replayed even when its pid now belongs to a live, unrelated process", () =>
    withDirectory((directory) =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        // A journal-mode appender acknowledges some appends, then is SIGKILLed.
        const child = spawn(process.execPath, [appender, directory, session, "-", "journal"], { stdio: ["ignore", "pipe", "inherit"] })
        const acked: Array<number> = []
        createInterface({ input: child.stdout! }).on("line", (line) => acked.push(Number(line.split(" ")[1])))
        yield* Effect.promise(() => new Promise<void>((resolve) => child.stdout!.once("data", () => setTimeout(resolve, 100))))
        child.kill("SIGKILL")
        yield* exited(child)
        // The session file loses what wasn't synced; only the journal still has it.
        const file = `${directory}/${SessionFile.fileName(session)}`
        const text = yield* fs.readFileString(file)
        yield* fs.truncate(file, text.indexOf("\n") + 1)
        // Its pid is reused by a process that has nothing to do with the log.
        const bystander = spawn("sleep", ["600"], { stdio: "ignore" })
        yield* Effect.addFinalizer(() => Effect.andThen(Effect.sync(() => bystander.kill("SIGKILL")), exited(bystander)))
        const [name] = (yield* fs.readDirectory(directory)).filter((n) => n.endsWith(Journal.extension))
        const bytes = yield* fs.readFileString(`${directory}/${name}`)
        const newline = bytes.indexOf("\n")
        const { crc: _, ...header } = JSON.parse(bytes.slice(0, newline))
        const reused = `${directory}/${Journal.fileName(bystander.pid!, "reused")}`
        yield* fs.writeFileString(reused, SessionFile.seal(JSON.stringify({ ...header, pid: bystander.pid })) + bytes.slice(newline + 1))
        yield* fs.remove(`${directory}/${name}`)
        // Every acknowledged append is back, and the journal is gone.
        const entries = yield* open(directory, readAll)
        assert.isAbove(acked.length, 0)
        assert.isAtLeast(entries.length, Math.max(...acked) + 1, "every acknowledged append is replayed")
        assert.deepStrictEqual((yield* fs.readDirectory(directory)).filter((n) => n.endsWith(Journal.extension)), [])
      })
    ), 30_000)
})

/** The lines of entries `from` to `to` (exclusive), as a batch of them is written. */
const lines = (from: number, to: number) => {
  let text = ""
  for (let seq = from; seq < to; seq++) text += SessionFile.entryLine("t", seq, 1000 + seq, JSON.stringify({ seq }))
  return SessionFile.encodeLines(text)
}

/** An owner whose process is gone: a pid no process has now, from `from` up. */
const deadOwner = (from: number, boot: string): Owner.Owner => {
  let pid = from
  while (Owner.pidExists(pid)) pid++
  return { pid, started: boot }
}

const header = SessionFile.headerLine(session, 1)

/** Writes a journal of `owner`'s, named after `name`, created at `created`, holding `batches` of the session. */
const journal = (
  directory: string,
  owner: Owner.Owner,
  name: string,
  created: number,
  batches: ReadonlyArray<{ readonly offset: number; readonly bytes: Uint8Array }>
) =>
  Effect.flatMap(FileSystem.FileSystem, (fs) =>
    fs.writeFile(
      `${directory}/${Journal.fileName(owner.pid, name)}`,
      SessionFile.concat([Journal.headerLine(owner, created), Journal.records(batches.map((batch) => ({ session, ...batch })))])
    ))

/** Writes the session file as a power loss left it, opens the log, and answers the seqs it reads and the journals left. */
const recovered = (directory: string, ...parts: ReadonlyArray<Uint8Array>) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    yield* fs.writeFile(`${directory}/${SessionFile.fileName(session)}`, SessionFile.concat([header, ...parts]))
    const entries = yield* open(directory, (log) => readAll(log))
    const journals = (yield* fs.readDirectory(directory)).filter((name) => name.endsWith(Journal.extension))
    return { seqs: entries.map((entry) => entry.seq), journals }
  })

describe("Recovery: several dead journals of one session", () => {
  // A dead process's journals hold seqs 0-1, 2-3 and 4-5 of a session, one batch each, written in
  // that order; the session file lost what was never synced (power lost): its data past the header
  // (read back as zeros), or everything past it. Replayed in the order their batches were written,
  // whatever their clocks say, every acknowledged entry is back.
  for (const lost of ["data only", "everything past the header"] as const) {
    for (
      const clocks of [
        { name: "clocks in order", created: [5000, 5001, 5002] },
        { name: "the clock stepped back", created: [5000, 4999, 4998] },
        { name: "opened in the same millisecond", created: [5000, 5000, 5000] }
      ]
    ) {
      it.effect(`${clocks.name}, the file's ${lost} lost: every acknowledged entry is back, and the journals are gone`, () =>
        withDirectory((directory) =>
          Effect.gen(function*() {
            const dead = deadOwner(4_100_000, "dead-boot:1")
            const batches = [lines(0, 2), lines(2, 4), lines(4, 6)]
            let offset = header.length
            for (const [i, bytes] of batches.entries()) {
              // Named so that a listing puts the newest first.
              yield* journal(directory, dead, "cba"[i]!, clocks.created[i]!, [{ offset, bytes }])
              offset += bytes.length
            }
            const { journals, seqs } = yield* recovered(directory, ...(lost === "data only" ? [new Uint8Array(offset - header.length)] : []))
            assert.deepStrictEqual(seqs, [0, 1, 2, 3, 4, 5])
            assert.deepStrictEqual(journals, [])
          })
        ))
    }
  }

  it.effect("a journal between two others already retired (its session file synced): the others are replayed around it", () =>
    withDirectory((directory) =>
      Effect.gen(function*() {
        const dead = deadOwner(4_200_000, "dead-boot:2")
        const [first, middle, last] = [lines(0, 2), lines(2, 4), lines(4, 6)]
        yield* journal(directory, dead, "b", 7000, [{ offset: header.length, bytes: first }])
        yield* journal(directory, dead, "a", 6999, [{ offset: header.length + first.length + middle.length, bytes: last }])
        // The middle journal's retirement synced the file through its batches (and removed it); the
        // last batch never reached the disk.
        assert.deepStrictEqual((yield* recovered(directory, first, middle)).seqs, [0, 1, 2, 3, 4, 5])
      })
    ))
})

describe("Recovery: runs of a session's batches", () => {
  it.effect("one journal whose batches for a session break where another process held it meanwhile: each run is replayed", () =>
    withDirectory((directory) =>
      Effect.gen(function*() {
        const dead = deadOwner(4_300_000, "dead-boot:3")
        const [before, between, after] = [lines(0, 2), lines(2, 4), lines(4, 6)]
        // The dead process appended seqs 0-1, its writer closed idle; another process appended 2-3 and
        // closed (its file synced, its journal removed); the dead one took the session back for 4-5.
        yield* journal(directory, dead, "a", 8000, [
          { offset: header.length, bytes: before },
          { offset: header.length + before.length + between.length, bytes: after }
        ])
        const { journals, seqs } = yield* recovered(directory, before, between)
        assert.deepStrictEqual(seqs, [0, 1, 2, 3, 4, 5])
        assert.deepStrictEqual(journals, [])
        const appended = yield* open(directory, (log) => log.append(session, "todo/write", { todos: [] }))
        assert.strictEqual(appended.seq, 6, "the session goes on")
      })
    ))

  it.effect("a run whose bytes were lost, before later ones durable in the file (their journal gone): written over in place, nothing after it cut", () =>
    withDirectory((directory) =>
      Effect.gen(function*() {
        const dead = deadOwner(4_400_000, "dead-boot:4")
        const [lost, durable] = [lines(0, 2), lines(2, 4)]
        // A journal kept because its session file's sync failed; a later checkpoint made 2-3 durable and
        // removed theirs; power lost what the failed sync held (read back as zeros).
        yield* journal(directory, dead, "a", 9000, [{ offset: header.length, bytes: lost }])
        assert.deepStrictEqual((yield* recovered(directory, new Uint8Array(lost.length), durable)).seqs, [0, 1, 2, 3])
      })
    ))
})

describe("Recovery: a dead journal that can't be read", () => {
  it.effect("an unreadable one fails the log's start, naming it: its acknowledged appends can't be replayed", () =>
    withDirectory((directory) =>
      Effect.gen(function*() {
        const dead = deadOwner(4_500_000, "dead-boot:5")
        yield* journal(directory, dead, "a", 9000, [{ offset: header.length, bytes: lines(0, 2) }])
        const path = `${directory}/${Journal.fileName(dead.pid, "a")}`
        const fs = failing(yield* FileSystem.FileSystem, { open: (p) => p === path ? systemError("EACCES", "open", p) : undefined })
        const error = failureOf(yield* Effect.exit(openRaw(directory, (log) => log.append(session, "x", 1), {}, fs)))
        assert.deepInclude(error.reason, { _tag: "StorageFailure", kind: "PermissionDenied" })
        assert.include(error.message, `the journal ${path} can't be read (permission denied (EACCES`)
        assert.include(error.message, "and its process is gone: the appends it may have acknowledged can't be replayed")
        assert.isTrue(PlatformError.isPlatformError(error.cause), "the file system's error stays the cause")
        assert.isTrue(yield* (yield* FileSystem.FileSystem).exists(path), "kept, for when it can be read")
      })
    ))

  it.effect("one whose pid runs again (reused after a crash) and whose header can't be read: the log's start fails too", () =>
    withDirectory((directory) =>
      Effect.gen(function*() {
        // This process has the pid now; the journal's owner was an earlier life of it.
        const earlier = { pid: process.pid, started: "an-earlier-boot" }
        yield* journal(directory, earlier, "b", 9000, [{ offset: header.length, bytes: lines(0, 2) }])
        const path = `${directory}/${Journal.fileName(process.pid, "b")}`
        const fs = failing(yield* FileSystem.FileSystem, { open: (p) => p === path ? systemError("EACCES", "open", p) : undefined })
        const error = failureOf(yield* Effect.exit(openRaw(directory, (log) => log.append(session, "x", 1), {}, fs)))
        assert.include(error.message, `the journal ${path} can't be read (permission denied (EACCES`)
        assert.include(error.message, "so whether its process is gone can't be told")
      })
    ))

  it.effect("one gone between the listing and its reading (another process's recovery replayed and removed it): the log opens", () =>
    withDirectory((directory) =>
      Effect.gen(function*() {
        const real = yield* FileSystem.FileSystem
        const dead = deadOwner(4_700_000, "dead-boot:7")
        yield* journal(directory, dead, "a", 9000, [{ offset: header.length, bytes: lines(0, 2) }])
        yield* real.writeFile(`${directory}/${SessionFile.fileName(session)}`, SessionFile.concat([header, lines(0, 2)]))
        const path = `${directory}/${Journal.fileName(dead.pid, "a")}`
        let listed = false
        const fs = FileSystem.FileSystem.of({
          ...real,
          readDirectory: (p, options) =>
            Effect.tap(real.readDirectory(p, options), () => listed ? Effect.void : Effect.andThen(real.remove(path), Effect.sync(() => listed = true)))
        })
        const appended = yield* openRaw(directory, (log) => log.append(session, "x", 1), {}, fs)
        assert.isTrue(listed)
        assert.strictEqual(appended.seq, 2)
      })
    ))

  it.effect("a link named like a journal is no journal of the log's: skipped, the log opens", () =>
    withDirectory((directory) =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const dead = deadOwner(4_600_000, "dead-boot:6")
        yield* fs.writeFileString(`${directory}/elsewhere`, "not a journal")
        yield* fs.symlink(`${directory}/elsewhere`, `${directory}/${Journal.fileName(dead.pid, "a")}`)
        const appended = yield* openRaw(directory, (log) => log.append(session, "x", 1))
        assert.strictEqual(appended.seq, 0)
        assert.strictEqual(yield* fs.readFileString(`${directory}/elsewhere`), "not a journal", "nothing followed the link")
      })
    ))
})

describe("Recovery: what the page cache holds", () => {
  it.effect(
    "a dead journal's batch already in the session file (as the page cache may hold it, never written back) is written and synced again before the journal is removed",
    () =>
      Effect.gen(function*() {
        const recorder = Recording.make()
        yield* Effect.gen(function*() {
          const fs = yield* FileSystem.FileSystem
          const directory = yield* fs.realPath(yield* fs.makeTempDirectoryScoped({ prefix: "todo-write-errseq-" }))
          let pid = 4_200_000
          while (Owner.pidExists(pid)) pid++
          const dead: Owner.Owner = { pid, started: "dead-boot:1" }
          const header = SessionFile.headerLine(session, 1)
          const lines = SessionFile.encodeLines(SessionFile.entryLine("t", 0, 1000, JSON.stringify({ seq: 0 })))
          // The dead process acknowledged seq 0 by its journal; its line is in the session file as
          // read back (the page cache), but was never synced (or its write-back failed, reported to
          // no one, or to a sync of the dead process's that it never saw succeed).
          yield* fs.writeFile(fileOf(directory), SessionFile.concat([header, lines]))
          const journalPath = join(directory, Journal.fileName(dead.pid, "dead"))
          yield* fs.writeFile(
            journalPath,
            SessionFile.concat([Journal.headerLine(dead, 5000), Journal.records([{ session, offset: header.length, bytes: lines }])])
          )
          recorder.record({ path: directory, op: "mark" })
          yield* openRaw(directory, () => Effect.void, {}, fs)
          const events = recorder.events
          const from = events.findIndex((e) => e.op === "mark")
          const removed = events.findIndex((e, i) => i > from && e.op === "remove" && e.path === journalPath)
          assert.isAbove(removed, from, "recovery removed the dead journal")
          const synced = events.findIndex((e, i) => i > from && i < removed && e.op === "sync" && e.path === fileOf(directory))
          assert.isAbove(synced, from, "the session file was synced (after its line was rewritten) before its journal was removed")
        }).pipe(Effect.scoped, Effect.provide(recorder.layer))
      })
  )
})
