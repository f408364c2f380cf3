import { NodeServices } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { spawn } from "node:child_process"
import { createInterface } from "node:readline"
import { Effect, Exit, Fiber, FileSystem, Latch, Layer, Path, type PlatformError, Stream } from "effect"
import type * as SessionEvent from "../../../src/log/SessionEvent.ts"
import * as SessionFile from "../../../src/log/file/Format.ts"
import * as SessionId from "../../../src/log/SessionId.ts"
import * as SessionLog from "../../../src/log/SessionLog.ts"
import type { SessionLogError } from "../../../src/log/SessionLogError.ts"
import * as SessionLogFile from "../../../src/log/file/SessionLogFile.ts"
import { conformance, failureOf } from "../SessionLogConformance.ts"
import * as TodoEvents from "../../../src/todo/TodoEvents.ts"
import { CheckedSessionLog } from "../../../src/log/CheckedSessionLog.ts"
import { replacing } from "./FileTest.ts"
import { appender } from "../../support/Executables.ts"

/** A fresh backend over a temporary directory that is removed afterwards. */
const tempBackend = () =>
  Layer.unwrap(Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const directory = yield* fs.makeTempDirectoryScoped({ prefix: "todo-write-" })
    return SessionLogFile.layerFileSystem({ directory })
  })).pipe(Layer.provide(NodeServices.layer))

conformance("JSONL files", tempBackend)
conformance("JSONL files, journal mode", () =>
  Layer.unwrap(Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const directory = yield* fs.makeTempDirectoryScoped({ prefix: "todo-write-" })
    return SessionLogFile.layerFileSystem({ directory, journal: { checkpointBytes: 4096 } })
  })).pipe(Layer.provide(NodeServices.layer)))

const session = SessionId.decodeSync("file-session")

/** Runs `body` with a temporary directory and a way to open the (checked) log over it. */
const withDirectory = <A, E>(
  body: (
    directory: string,
    open: <B, E2>(
      use: (log: SessionLog.Service) => Effect.Effect<B, E2>
    ) => Effect.Effect<B, E2 | PlatformError.PlatformError | SessionLogError>
  ) => Effect.Effect<A, E, FileSystem.FileSystem | Path.Path>
) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const directory = yield* fs.makeTempDirectoryScoped({ prefix: "todo-write-" })
    const open = <B, E2>(use: (log: SessionLog.Service) => Effect.Effect<B, E2>) =>
      Effect.flatMap(CheckedSessionLog, use).pipe(
        Effect.provide(
          TodoEvents.layerChecked.pipe(
            Layer.provide(SessionLogFile.layerFileSystem({ directory })),
            Layer.provide(NodeServices.layer)
          )
        )
      )
    return yield* body(directory, open)
  }).pipe(Effect.provide(NodeServices.layer))

const readAll = (log: SessionLog.SessionLog["Service"]) => Stream.runCollect(log.read(session))

const todo = (content: string) => ({ todos: [{ content, status: "pending" }] })

/** Writes three entries and answers the file's lines. */
const seed = (open: Parameters<Parameters<typeof withDirectory>[0]>[1]) =>
  open((log) =>
    Effect.gen(function*() {
      yield* log.append(session, "todo/write", todo("one"))
      yield* log.append(session, "note", { text: "two" })
      yield* log.append(session, "todo/write", todo("three"))
    })
  )

const fileOf = (directory: string) => `${directory}/${SessionFile.fileName(session)}`

/** Spawns the appender child; `acked` collects the seqs it acknowledged, per session. */
const spawnAppender = (directory: string, sessions: ReadonlyArray<string> = [session], mode?: "journal") => {
  const child = spawn(process.execPath, [appender, directory, sessions.join(","), "-", ...(mode === undefined ? [] : [mode])], {
    stdio: ["ignore", "pipe", "pipe"]
  })
  const ackedBy = new Map<string, Array<number>>(sessions.map((s) => [s, []]))
  let stderr = ""
  child.stderr.on("data", (chunk) => (stderr += chunk))
  createInterface({ input: child.stdout }).on("line", (line) => {
    const [s, seq] = line.split(" ")
    ackedBy.get(s!)?.push(Number(seq))
  })
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
  return { child, acked: ackedBy.get(sessions[0]!)!, ackedBy, exited, stderr: () => stderr }
}

/**
 * Three rounds of: an appender child writes to all `sessions` at once and is SIGKILLed at a random
 * moment; then every session loads, with every event it acknowledged, seqs contiguous.
 */
const crashRounds = (sessions: ReadonlyArray<string>, mode?: "journal") =>
  withDirectory((directory, open) =>
    Effect.gen(function*() {
      for (let round = 0; round < 3; round++) {
        const child = spawnAppender(directory, sessions, mode)
        yield* runningFor(child, 50 + Math.floor(Math.random() * 200))
        child.child.kill("SIGKILL")
        yield* Effect.promise(() => child.exited)
        for (const id of sessions) {
          const acked = child.ackedBy.get(id)!
          const entries = yield* open((log) => Stream.runCollect(log.read(SessionId.decodeSync(id))))
          entries.forEach((entry, i) => assert.strictEqual(entry.seq, i))
          assert.isAtLeast(entries.length, Math.max(...acked) + 1, `round ${round}, ${id}: every acknowledged event loads`)
        }
      }
    })
  )

/** Waits until the child has acknowledged something, then `extraMs` more. */
const runningFor = (child: ReturnType<typeof spawnAppender>, extraMs: number) =>
  Effect.promise(() =>
    new Promise<void>((resolve) => {
      const check = setInterval(() => {
        if ([...child.ackedBy.values()].every((acked) => acked.length > 0)) {
          clearInterval(check)
          setTimeout(resolve, extraMs)
        }
      }, 5)
    })
  )

/**
 * Runs `body` against a file log whose file handles fsync through `sync` (given the real fsync), to
 * observe or hold fsyncs.
 */
const withSync = <A, E>(
  sync: (real: Effect.Effect<void, PlatformError.PlatformError>) => Effect.Effect<void, PlatformError.PlatformError>,
  body: (log: SessionLog.SessionLog["Service"]) => Effect.Effect<A, E>,
  options: Omit<SessionLogFile.Options, "directory"> = {}
) =>
  Effect.gen(function*() {
    const real = yield* FileSystem.FileSystem
    const observed = FileSystem.FileSystem.of({
      ...real,
      open: (path, options) =>
        Effect.map(real.open(path, options), (file) => Object.create(file, { sync: { get: () => sync(file.sync) } }))
    })
    const directory = yield* real.makeTempDirectoryScoped({ prefix: "todo-write-" })
    return yield* Effect.flatMap(SessionLog.SessionLog, body).pipe(
      Effect.provide(SessionLogFile.layerFileSystem({ ...options, directory }).pipe(
        Layer.provide(replacing(observed))
      ))
    )
  }).pipe(Effect.provide(NodeServices.layer))

describe("SessionLogFile", () => {
  it.effect("writes a header, then one envelope per line, exactly as appended", () =>
    withDirectory((directory, open) =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        yield* seed(open)
        const lines = (yield* fs.readFileString(fileOf(directory))).split("\n")
        assert.strictEqual(lines.length, 5)
        assert.strictEqual(lines[4], "")
        const header = JSON.parse(lines[0]!)
        assert.deepInclude(header, { format: SessionFile.format, version: SessionFile.version, session })
        const { crc, ...envelope } = JSON.parse(lines[2]!)
        assert.deepStrictEqual(envelope, { type: "note", seq: 1, time: 0, data: { text: "two" } })
        assert.match(crc, /^[0-9a-f]{8}$/)
        assert.deepStrictEqual(yield* open((log) => log.sessions), [session])
      })
    ))

  it.effect("creates the directory if it is missing", () =>
    withDirectory((directory) =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const nested = `${directory}/a/b`
        yield* Effect.flatMap(SessionLog.SessionLog, (log) => log.append(session, "x", 1)).pipe(
          Effect.provide(SessionLogFile.layerFileSystem({ directory: nested }).pipe(Layer.provide(NodeServices.layer)))
        )
        assert.isTrue(yield* fs.exists(fileOf(nested)))
      })
    ))

  it.effect("a restarted log continues the same session at the next seq", () =>
    withDirectory((_, open) =>
      Effect.gen(function*() {
        yield* seed(open)
        const next = yield* open((log) => log.append(session, "after-restart", {}))
        assert.strictEqual(next.seq, 3)
        assert.deepStrictEqual((yield* open(readAll)).map((e) => e.seq), [0, 1, 2, 3])
      })
    ))

  it.effect("hostile session ids are rejected before any I/O", () =>
    withDirectory((directory) =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        for (const id of ["../x", "/etc/passwd", "a\u0000b", "x".repeat(1000), "NUL", "..", "a/../../b"]) {
          const decoded = yield* Effect.exit(SessionId.decode(id))
          assert.isTrue(Exit.isFailure(decoded), JSON.stringify(id))
        }
        assert.deepStrictEqual(yield* fs.readDirectory(directory), [])
      })
    ))

  describe("damage", () => {
    /** Rewrites line `index` (0 = header) through `edit`, checksummed anew: damage made to look written. */
    const rewritten = (index: number, edit: (json: string) => string) => (text: string) => {
      const lines = text.split("\n")
      const { crc: _, ...object } = JSON.parse(lines[index]!)
      lines[index] = SessionFile.seal(edit(JSON.stringify(object))).trimEnd()
      return lines.join("\n")
    }

    const damaged = (mutate: (text: string) => string) =>
      withDirectory((directory, open) =>
        Effect.gen(function*() {
          const fs = yield* FileSystem.FileSystem
          yield* seed(open)
          const file = fileOf(directory)
          yield* fs.writeFileString(file, mutate(yield* fs.readFileString(file)))
          return failureOf(yield* Effect.exit(open(readAll)))
        })
      )

    it.effect("a flipped byte in the middle is an error naming its line", () =>
      Effect.gen(function*() {
        const error = yield* damaged((text) => text.replace(`"seq":1,`, `"seq":1;`))
        assert.strictEqual(error._tag, "SessionLogError")
        assert.strictEqual(error.reason._tag, "Corrupt")
        if (error.reason._tag === "Corrupt") assert.strictEqual(error.reason.line, 3)
        assert.include(error.message, "file-session")
        assert.include(error.message, "line 3")
      }))

    it.effect("a flipped byte inside a string value is caught by the line's checksum", () =>
      Effect.gen(function*() {
        const error = yield* damaged((text) => text.replace(`"text":"two"`, `"text":"twa"`))
        assert.deepInclude(error.reason, { _tag: "Corrupt", line: 3 })
        assert.include(error.message, "checksum mismatch")
        const bad = yield* damaged(rewritten(2, (json) => json.replace(`"seq":1,`, `"seq":1;`)))
        assert.deepInclude(bad.reason, { _tag: "Corrupt", line: 3 })
        assert.include(bad.message, "bad JSON")
      }))

    it.effect("deleted bytes in the middle are an error naming the line", () =>
      Effect.gen(function*() {
        const lines = (text: string) => text.split("\n")
        const withoutLine = yield* damaged((text) => lines(text).filter((_, i) => i !== 2).join("\n"))
        assert.deepInclude(withoutLine.reason, { _tag: "Corrupt", line: 3 })
        assert.include(withoutLine.message, "gap")
        const truncatedLine = yield* damaged((text) => {
          const all = lines(text)
          all[2] = all[2]!.slice(0, 20)
          return all.join("\n")
        })
        assert.deepInclude(truncatedLine.reason, { _tag: "Corrupt", line: 3 })
        assert.include(truncatedLine.message, "checksum")
      }))

    it.effect("a repeated seq is an error", () =>
      Effect.gen(function*() {
        const error = yield* damaged((text) => {
          const all = text.split("\n")
          return [...all.slice(0, 3), all[2], ...all.slice(3)].join("\n")
        })
        assert.deepInclude(error.reason, { _tag: "Corrupt", line: 4 })
        assert.include(error.message, "repeats")
      }))

    it.effect("a seq or time JSON can write but no safe integer holds is damage, as the schema says, checksum or not", () =>
      Effect.gen(function*() {
        for (const [from, to] of [[`"time":0`, `"time":1e20`], [`"seq":1,`, `"seq":1.5,`]] as const) {
          const error = yield* damaged(rewritten(2, (json) => json.replace(from, to)))
          assert.deepInclude(error.reason, { _tag: "Corrupt", line: 3 }, to)
        }
      }))

    it.effect("a file from another session id is refused", () =>
      Effect.gen(function*() {
        const error = yield* damaged(rewritten(0, (json) => json.replace(`"session":"file-session"`, `"session":"someone-else"`)))
        assert.deepInclude(error.reason, { _tag: "Corrupt", line: 1 })
        assert.include(error.message, "someone-else")
      }))

    it.effect("a newer format version is refused", () =>
      Effect.gen(function*() {
        const error = yield* damaged(rewritten(0, (json) => json.replace(`"version":1`, `"version":2`)))
        assert.deepInclude(error.reason, { _tag: "Corrupt", line: 1 })
        assert.include(error.message, "format version 2")
      }))

    it.effect("an event that fails the invariant is an error naming its seq and rule", () =>
      Effect.gen(function*() {
        const error = yield* damaged(rewritten(3, (json) => json.replace(`"content":"three"`, `"content":" three"`)))
        assert.strictEqual(error.reason._tag, "InvariantViolation")
        if (error.reason._tag === "InvariantViolation") {
          assert.strictEqual(error.reason.seq, 2)
          assert.strictEqual(error.reason.rule, TodoEvents.writeInvariant.rule)
        }
      }))

    it.effect("a torn tail is left out of reads, then cut when appending resumes", () =>
      withDirectory((directory, open) =>
        Effect.gen(function*() {
          const fs = yield* FileSystem.FileSystem
          yield* seed(open)
          const file = fileOf(directory)
          const whole = yield* fs.readFileString(file)
          yield* fs.writeFileString(file, whole + `{"type":"todo/write","seq":3,"time":0,"data":{"todos":[{"con`)
          assert.deepStrictEqual((yield* open(readAll)).map((e) => e.seq), [0, 1, 2])
          const next = yield* open((log) => log.append(session, "after", {}))
          assert.strictEqual(next.seq, 3)
          const repaired = yield* fs.readFileString(file)
          assert.isTrue(repaired.startsWith(whole))
          assert.strictEqual(repaired.split("\n").length, 6)
          // zeros left by a crash that extended the file are a torn tail too
          yield* fs.writeFileString(file, repaired + "\u0000\u0000\u0000")
          assert.strictEqual((yield* open((log) => log.append(session, "again", {}))).seq, 4)
        })
      ))
  })

  describe("processes", () => {
    it.live("two processes cannot both append to one session", () =>
      withDirectory((directory, open) =>
        Effect.gen(function*() {
          const first = spawnAppender(directory)
          yield* runningFor(first, 0)
          const error = failureOf(yield* Effect.exit(open((log) => log.append(session, "x", {}))))
          first.child.kill("SIGTERM")
          yield* Effect.promise(() => first.exited)
          assert.strictEqual(error.reason._tag, "Locked")
          assert.include(error.message, `process ${first.child.pid}`)
          // once it is gone, its lock is gone too
          assert.isTrue(Exit.isSuccess(yield* Effect.exit(open((log) => log.append(session, "y", {})))))
        })
      ))

    it.live("crash safety: after each SIGKILL every acknowledged event is there and appending continues", () =>
      withDirectory((directory, open) =>
        Effect.gen(function*() {
          let everAcked = -1
          for (let round = 0; round < 3; round++) {
            const child = spawnAppender(directory)
            // let it run for a random while, past its first acknowledgements
            yield* runningFor(child, 50 + Math.floor(Math.random() * 250))
            child.child.kill("SIGKILL")
            yield* Effect.promise(() => child.exited)
            const acked = Math.max(...child.acked)
            assert.isAbove(acked, everAcked, `round ${round}: the child made progress`)
            everAcked = acked
            // the stale lock left by the killed child doesn't block this process
            const entries = yield* open(readAll)
            assert.isAtLeast(entries.length, acked + 1, `round ${round}: all ${acked + 1} acknowledged events load`)
            entries.forEach((entry, i) => {
              assert.strictEqual(entry.seq, i)
              assert.strictEqual(entry.type, "todo/write")
            })
            for (const seq of child.acked) {
              const content = (entries[seq]!.data as { todos: Array<{ content: string }> }).todos[0]!.content
              assert.match(content, /^x*step \d+$/)
            }
            const next = yield* open((log) => log.append(session, "todo/write", todo(`after round ${round}`)))
            assert.strictEqual(next.seq, entries.length)
            everAcked = next.seq
          }
        })
      ), 60_000)
  })

  it.live("crash safety across sessions: a SIGKILL mid-way through many sessions' appends loses no acknowledged one", () =>
    crashRounds(["m0", "m1", "m2", "m3", "m4", "m5"]), 60_000)

  describe("journal mode", () => {
    it.live("a SIGKILL loses no acknowledged append, even if the session files lost what wasn't synced", () =>
      withDirectory((directory, open) =>
        Effect.gen(function*() {
          const fs = yield* FileSystem.FileSystem
          const sessions = ["j0", "j1", "j2", "j3"]
          const child = spawnAppender(directory, sessions, "journal")
          yield* runningFor(child, 150)
          child.child.kill("SIGKILL")
          yield* Effect.promise(() => child.exited)
          const journals = (yield* fs.readDirectory(directory)).filter((name) => name.endsWith(".wal"))
          assert.strictEqual(journals.length, 1, "the dead process's journal is left behind")
          // What a power cut can do to files that were written but not fsynced: lose their tails, or
          // keep the size with zeros where the data should be.
          for (const [i, id] of sessions.entries()) {
            const file = `${directory}/${id}.jsonl`
            const text = yield* fs.readFileString(file)
            const headerEnd = text.indexOf("\n") + 1
            if (i % 2 === 0) yield* fs.truncate(file, headerEnd)
            else yield* fs.writeFileString(file, text.slice(0, headerEnd) + "\u0000".repeat(text.length - headerEnd))
          }
          for (const id of sessions) {
            const acked = child.ackedBy.get(id)!
            const entries = yield* open((log) => Stream.runCollect(log.read(SessionId.decodeSync(id))))
            entries.forEach((entry, i) => assert.strictEqual(entry.seq, i))
            assert.isAtLeast(entries.length, Math.max(...acked) + 1, `${id}: every acknowledged event is back`)
          }
          assert.deepStrictEqual((yield* fs.readDirectory(directory)).filter((name) => name.endsWith(".wal")), [])
        })
      ), 60_000)

    it.live("a log that was open before the crash replays the dead journal when it takes a session over", () =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const directory = yield* fs.makeTempDirectoryScoped({ prefix: "todo-write-" })
        const id = "takeover"
        yield* Effect.flatMap(SessionLog.SessionLog, (log) =>
          Effect.gen(function*() {
            // This log starts first: there is nothing to recover yet.
            const child = spawnAppender(directory, [id], "journal")
            yield* runningFor(child, 100)
            child.child.kill("SIGKILL")
            yield* Effect.promise(() => child.exited)
            const acked = child.ackedBy.get(id)!
            const file = `${directory}/${id}.jsonl`
            const text = yield* fs.readFileString(file)
            yield* fs.truncate(file, text.indexOf("\n") + 1) // the unsynced tail is lost
            const next = yield* log.append(SessionId.decodeSync(id), "after", {})
            assert.isAbove(next.seq, Math.max(...acked), "appending resumes after every acknowledged event")
            const entries = yield* Stream.runCollect(log.read(SessionId.decodeSync(id)))
            entries.forEach((entry, i) => assert.strictEqual(entry.seq, i))
            assert.strictEqual(entries.length, next.seq + 1)
          })).pipe(
            Effect.provide(SessionLogFile.layerFileSystem({ directory }).pipe(Layer.provide(NodeServices.layer)))
          )
      }).pipe(Effect.provide(NodeServices.layer)), 60_000)

    it.live("crash safety across sessions, three SIGKILLs in a row", () =>
      crashRounds(["k0", "k1", "k2", "k3", "k4", "k5"], "journal"), 60_000)

    it.effect("checkpoints rotate journals; a clean close syncs the session files and removes them all", () =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const directory = yield* fs.makeTempDirectoryScoped({ prefix: "todo-write-" })
        const other = SessionId.decodeSync("other")
        yield* Effect.flatMap(SessionLog.SessionLog, (log) =>
          Effect.forEach(Array.from({ length: 60 }, (_, i) => i), (i) =>
            log.append(i % 2 === 0 ? session : other, "n", { i, pad: "x".repeat(100) }), { concurrency: 4, discard: true })).pipe(
            Effect.provide(
              SessionLogFile.layerFileSystem({ directory, journal: { checkpointBytes: 1024 } }).pipe(
                Layer.provide(NodeServices.layer)
              )
            )
          )
        assert.deepStrictEqual((yield* fs.readDirectory(directory)).sort(), [SessionFile.fileName(other), SessionFile.fileName(session)].sort())
        const reread = yield* Effect.flatMap(SessionLog.SessionLog, (log) => Stream.runCollect(log.read(session))).pipe(
          Effect.provide(SessionLogFile.layerFileSystem({ directory }).pipe(Layer.provide(NodeServices.layer)))
        )
        assert.strictEqual(reread.length, 30)
      }).pipe(Effect.provide(NodeServices.layer)))

    it.effect("one fsync acknowledges appends to many sessions", () => {
      let syncs = 0
      const sessions = Array.from({ length: 64 }, (_, i) => SessionId.decodeSync(`g${i}`))
      return withSync(
        (sync) => Effect.andThen(Effect.sync(() => syncs++), sync),
        (log) =>
          Effect.gen(function*() {
            yield* Effect.forEach(sessions, (id) => log.append(id, "open", {}), { concurrency: "unbounded", discard: true })
            const before = syncs
            yield* Effect.forEach(sessions, (id) => log.append(id, "n", { id }), { concurrency: "unbounded", discard: true })
            assert.isAtLeast(syncs - before, 1)
            assert.isBelow(syncs - before, sessions.length / 4, `${syncs - before} fsyncs for ${sessions.length} sessions`)
          }),
        { journal: true }
      )
    })
  })

  it.effect("group commit: concurrent appends share fsyncs, and each is acknowledged after one", () => {
    let syncs = 0
    const appends = 400
    return withSync((sync) => Effect.andThen(Effect.sync(() => syncs++), sync), (log) =>
      Effect.gen(function*() {
        yield* log.append(session, "warm-up", {})
        const before = syncs
        const entries = yield* Effect.forEach(
          Array.from({ length: appends }, (_, i) => i),
          (i) => log.append(session, "n", { i }),
          { concurrency: "unbounded" }
        )
        assert.deepStrictEqual(entries.map((e) => e.seq).sort((a, b) => a - b), Array.from({ length: appends }, (_, i) => i + 1))
        assert.isAtLeast(syncs - before, 1)
        assert.isBelow(syncs - before, appends / 4, `${syncs - before} fsyncs for ${appends} appends`)
      }))
  })

  it.effect("a read from a late seq bisects to it, without scanning what comes before", () =>
    withDirectory((directory, open) =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        let text = new TextDecoder().decode(SessionFile.headerLine(session, 0))
        for (let seq = 0; seq < 20_000; seq++) {
          text += SessionFile.entryLine(seq % 7 === 0 ? "todo/write" : "tick", seq, seq, seq % 7 === 0 ? JSON.stringify(todo(`v${seq}`)) : `{"n":${seq},"pad":"${"x".repeat(seq % 300)}"}`)
        }
        yield* fs.writeFileString(fileOf(directory), text)
        for (const from of [1, 777, 12_345, 19_999, 20_000, 25_000]) {
          const tail = yield* open((log) => Stream.runCollect(log.read(session, { fromSeq: from })))
          assert.strictEqual(tail.length, Math.max(0, 20_000 - from), `from ${from}`)
          if (tail.length > 0) assert.strictEqual(tail[0]!.seq, from)
        }
        // damage before the seq asked for is not read; damage after it is still found, with its line
        const lines = text.split("\n")
        lines[100] = lines[100]!.replace(`"n":`, `"m":`)
        lines[15_003] = lines[15_003]!.replace(`"n":`, `"m":`)
        yield* fs.writeFileString(fileOf(directory), lines.join("\n"))
        const error = failureOf(yield* Effect.exit(open((log) => Stream.runCollect(log.read(session, { fromSeq: 12_000 })))))
        assert.deepInclude(error.reason, { _tag: "Corrupt", line: 15_004 })
        const whole = failureOf(yield* Effect.exit(open(readAll)))
        assert.deepInclude(whole.reason, { _tag: "Corrupt", line: 101 })
      })
    ), 60_000)

  it.live("no append is acknowledged before the fsync of its batch completes", () =>
    Effect.gen(function*() {
      const syncGate = yield* Latch.make(false)
      yield* withSync((sync) => Effect.andThen(syncGate.await, sync), (log) =>
        Effect.gen(function*() {
          const fibers: Array<Fiber.Fiber<SessionEvent.Entry, unknown>> = []
          for (let i = 0; i < 20; i++) fibers.push(yield* Effect.forkChild(log.append(session, "n", { i })))
          yield* Effect.sleep("100 millis")
          for (const fiber of fibers) assert.isUndefined(fiber.pollUnsafe(), "acknowledged before its fsync")
          yield* syncGate.open
          const entries = yield* Effect.forEach(fibers, Fiber.join)
          assert.deepStrictEqual(entries.map((e) => e.seq).sort((a, b) => a - b), Array.from({ length: 20 }, (_, i) => i))
        }))
    }))

  // The million-event read (memory sampled on and off the heap, bytes read counted) is in Memory.test.ts.
})

describe("SessionLogFile options", () => {
  it.effect("are validated when the layer is built, and by verify and repair: bad ones fail with InvalidOptions", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const directory = yield* fs.makeTempDirectoryScoped({ prefix: "todo-write-" })
      const bad: ReadonlyArray<readonly [SessionLogFile.Options, string]> = [
        [{ directory: "" }, "directory"],
        [{ directory, journal: { checkpointBytes: 0 } }, "checkpointBytes"],
        [{ directory, journal: { checkpointBytes: 1.5 } }, "checkpointBytes"],
        [{ directory, maxLineBytes: 10 }, "maxLineBytes"], // shorter than a header
        [{ directory, maxLineBytes: 2 ** 40 }, "maxLineBytes"], // more memory than a line should ever take
        [{ directory, maxLineBytes: Number.NaN }, "maxLineBytes"],
        [{ directory, idleWriterTimeout: 0 }, "idleWriterTimeout"], // every writer closed at once, always
        [{ directory, idleWriterTimeout: "-1 minutes" }, "idleWriterTimeout"],
        [{ directory, idleWriterTimeout: Number.NaN }, "idleWriterTimeout"],
        [{ directory, idleWriterTimeout: "1 nano" }, "idleWriterTimeout"], // a sweeper that never sleeps
        [{ directory, watch: { pollInterval: 0 } }, "pollInterval"] // a poll that never sleeps
      ]
      for (const [options, key] of bad) {
        const built = failureOf(yield* Effect.exit(
          Layer.build(SessionLogFile.layerFileSystem(options)).pipe(Effect.provide(NodeServices.layer))
        ))
        assert.deepInclude(built.reason, { _tag: "InvalidOptions" })
        assert.include(built.message, key, JSON.stringify(options))
        const verified = failureOf(yield* Effect.exit(SessionLogFile.verify(options, session, TodoEvents.invariants)))
        assert.deepInclude(verified.reason, { _tag: "InvalidOptions" })
        const repaired = failureOf(yield* Effect.exit(SessionLogFile.repair(options, session)))
        assert.deepInclude(repaired.reason, { _tag: "InvalidOptions" })
      }
      assert.deepStrictEqual(yield* fs.readDirectory(directory), [], "nothing was created")
    }).pipe(Effect.provide(NodeServices.layer)))
})
