/**
 * Live updates across processes for the file backend: a child process appends, and a subscriber in
 * this process (a log built with `watch`) sees every entry once, in seq order per session, never a
 * torn line; a crash mid-line is not shown, and the next writer's repair is followed.
 */
import { NodeServices } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { spawn } from "node:child_process"
import { appendFileSync } from "node:fs"
import { Effect, FileSystem, Layer, Option, Path, PlatformError, Schedule, Stream } from "effect"
import { CheckedSessionLog } from "../../../src/log/CheckedSessionLog.ts"
import * as Format from "../../../src/log/file/Format.ts"
import * as Scanner from "../../../src/log/file/Scanner.ts"
import * as SessionLogFile from "../../../src/log/file/SessionLogFile.ts"
import * as Watcher from "../../../src/log/file/Watcher.ts"
import type * as SessionEvent from "../../../src/log/SessionEvent.ts"
import * as SessionId from "../../../src/log/SessionId.ts"
import * as TodoEvents from "../../../src/todo/TodoEvents.ts"
import { appender } from "../../support/Executables.ts"

/** A session file's header line, as text to write before its entries. */
const header = (session: string) => new TextDecoder().decode(Format.headerLine(session, 1))

/** Runs the appender child to completion: `count` appends spread over `sessions`. */
const runAppender = (directory: string, sessions: ReadonlyArray<string>, count: number) =>
  Effect.promise(() =>
    new Promise<void>((resolve, reject) => {
      const child = spawn(process.execPath, [appender, directory, sessions.join(","), String(count)], {
        stdio: ["ignore", "ignore", "pipe"]
      })
      let stderr = ""
      child.stderr.on("data", (chunk) => (stderr += chunk))
      child.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`appender exited ${code}: ${stderr}`))))
    })
  )

/** A checked file log over `directory` that watches it, polling often so the safety net runs too. */
const watchingLog = (directory: string, maxLineBytes?: number) =>
  TodoEvents.layerChecked.pipe(
    Layer.provide(SessionLogFile.layerFileSystem({
      directory,
      watch: { pollInterval: "50 millis", fallbackPollInterval: "50 millis" },
      ...(maxLineBytes === undefined ? {} : { maxLineBytes })
    }))
  )

/** Subscribes now and collects what arrives, per session, in arrival order. */
const collect = Effect.gen(function*() {
  const log = yield* CheckedSessionLog
  const seen = new Map<string, Array<SessionEvent.Entry>>()
  const subscription = yield* log.subscribe
  yield* subscription.pipe(
    Stream.runForEach(({ session, entry }) =>
      Effect.sync(() => {
        const entries = seen.get(session) ?? []
        entries.push(entry)
        seen.set(session, entries)
      })
    ),
    Effect.forkScoped
  )
  /** Waits until `session` has an entry with seq `seq` (the test's timeout bounds the wait). */
  const until = (session: string, seq: number) =>
    Effect.suspend(() =>
      (seen.get(session) ?? []).some((entry) => entry.seq === seq) ? Effect.void : Effect.fail("not yet")
    ).pipe(Effect.retry(Schedule.spaced("20 millis")))
  return { seen, until }
})

/** What the session's file holds now, read afresh. */
const onDisk = (session: string) =>
  Effect.flatMap(CheckedSessionLog, (log) => Stream.runCollect(log.read(SessionId.decodeSync(session))))

const contentOf = (entry: SessionEvent.Entry) => JSON.stringify(entry.data)

describe("SessionLogFile watch", () => {
  it.live("another process's appends reach a subscriber once each, in seq order, as written", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const directory = yield* fs.makeTempDirectoryScoped({ prefix: "todo-write-watch-" })
      yield* Effect.gen(function*() {
        const { seen, until } = yield* collect
        yield* runAppender(directory, ["watch-a", "watch-b"], 300)
        const files = { a: yield* onDisk("watch-a"), b: yield* onDisk("watch-b") }
        assert.strictEqual(files.a.length + files.b.length, 300)
        yield* until("watch-a", files.a.length - 1)
        yield* until("watch-b", files.b.length - 1)
        // A later commit by yet another process: anything delivered twice would have come before it.
        yield* runAppender(directory, ["watch-end"], 1)
        yield* until("watch-end", 0)
        for (const [id, file] of [["watch-a", files.a], ["watch-b", files.b]] as const) {
          const got = seen.get(id)!
          assert.deepStrictEqual(got.map((entry) => entry.seq), file.map((entry) => entry.seq), `${id}: each seq once, in order`)
          assert.deepStrictEqual(got.map(contentOf), file.map(contentOf), `${id}: as written`)
        }
      }).pipe(Effect.provide(watchingLog(directory)))
    }).pipe(Effect.provide(NodeServices.layer)), 60_000)

  it.live("a crash mid-line is not shown; the next writer's repair is followed", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const directory = yield* fs.makeTempDirectoryScoped({ prefix: "todo-write-watch-" })
      const file = `${directory}/${Format.fileName("torn")}`
      yield* runAppender(directory, ["torn"], 3) // seqs 0..2, committed before the watch: never announced
      yield* Effect.gen(function*() {
        const { seen, until } = yield* collect
        // Another writer commits seq 3, then crashes half-way through the line of seq 4.
        const write = (seq: number, content: string) =>
          Format.entryLine("todo/write", seq, 1, JSON.stringify({ todos: [{ content, status: "pending" }] }))
        const torn = write(4, "TORN, never acknowledged")
        appendFileSync(file, write(3, "committed by hand") + torn.slice(0, torn.length >> 1))
        yield* until("torn", 3)
        assert.deepStrictEqual(seen.get("torn")!.map((entry) => entry.seq), [3], "the torn line is not shown")
        // The next writer cuts the torn tail and appends seqs 4..6.
        yield* runAppender(directory, ["torn"], 3)
        yield* until("torn", 6)
        const got = seen.get("torn")!
        assert.deepStrictEqual(got.map((entry) => entry.seq), [3, 4, 5, 6])
        assert.deepStrictEqual(got.map(contentOf), (yield* onDisk("torn")).slice(3).map(contentOf))
        assert.notInclude(got.map(contentOf).join(), "TORN")
      }).pipe(Effect.provide(watchingLog(directory)))
    }).pipe(Effect.provide(NodeServices.layer)), 60_000)

  for (
    const { limit, mib, name } of [
      { name: "within the default 4 MiB limit", mib: 3, limit: undefined },
      { name: "past 4 MiB, within a log's higher limit", mib: 5, limit: 8 * 1024 * 1024 }
    ]
  ) {
    it.live(`a line longer than the probes' first windows (${mib} MiB, ${name}) is announced as it is committed`, () =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const directory = yield* fs.makeTempDirectoryScoped({ prefix: "todo-write-watch-" })
        const file = `${directory}/${Format.fileName("long")}`
        appendFileSync(file, Format.headerLine("long", 1))
        appendFileSync(file, Format.entryLine("note", 0, 1, "{}"))
        yield* Effect.gen(function*() {
          const { seen, until } = yield* collect
          // Another writer commits a long line, and nothing after it for a while.
          const long = "x".repeat(mib * 1024 * 1024)
          appendFileSync(file, Format.entryLine("note", 1, 1, JSON.stringify({ long })))
          yield* until("long", 1).pipe(Effect.timeoutOrElse({
            duration: "15 seconds",
            orElse: () => Effect.fail(`the ${mib} MiB line another writer committed was never announced`)
          }))
          appendFileSync(file, Format.entryLine("note", 2, 1, JSON.stringify({ short: true })))
          yield* until("long", 2)
          const got = seen.get("long")!
          assert.deepStrictEqual(got.map((entry) => entry.seq), [1, 2])
          assert.strictEqual((got[0]!.data as { long: string }).long.length, long.length)
        }).pipe(Effect.provide(watchingLog(directory, limit)))
      }).pipe(Effect.provide(NodeServices.layer)), 60_000)
  }

  it.live("where the directory can't be watched, polling carries the updates", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const directory = yield* fs.makeTempDirectoryScoped({ prefix: "todo-write-watch-" })
      let asked = 0
      const unwatchable = Layer.succeed(FileSystem.WatchBackend, {
        register: (path) => {
          asked++
          return Option.some(Stream.fail(PlatformError.systemError({
            _tag: "Unknown",
            module: "FileSystem",
            method: "watch",
            pathOrDescriptor: path,
            description: "no watch here (test)"
          })))
        }
      })
      yield* Effect.gen(function*() {
        const { seen, until } = yield* collect
        yield* runAppender(directory, ["polled"], 20)
        yield* until("polled", 19)
        assert.deepStrictEqual(seen.get("polled")!.map((entry) => entry.seq), Array.from({ length: 20 }, (_, i) => i))
      }).pipe(Effect.provide(watchingLog(directory).pipe(Layer.provide(unwatchable))))
      assert.strictEqual(asked, 1, "the watch was tried, and failed")
    }).pipe(Effect.provide(NodeServices.layer)), 60_000)
})

describe("Watcher: what an announcement carries", () => {
  it.live("a short commit's entries, read as the watch heard of it; past what is read whole, the last seq alone", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const directory = yield* fs.makeTempDirectoryScoped({ prefix: "todo-write-watch-" })
      const file = `${directory}/${Format.fileName("s")}`
      appendFileSync(file, Format.headerLine("s", 1))
      appendFileSync(file, Format.entryLine("note", 0, 1, "{}"))
      const announcements = yield* Watcher.make(fs, yield* Path.Path, directory, {
        maxLineBytes: Scanner.defaultMaxLineBytes,
        owned: () => false,
        pollInterval: "50 millis"
      })
      const heard: Array<Watcher.Announcement> = []
      yield* Effect.forkScoped(Stream.runForEach(announcements, (announcement) => Effect.sync(() => heard.push(announcement))))
      const until = (seq: number) =>
        Effect.suspend(() => heard.some((a) => a.seq === seq) ? Effect.void : Effect.fail("not yet")).pipe(
          Effect.retry(Schedule.spaced("20 millis"))
        )
      // Two entries in one write, as a batch is.
      appendFileSync(file, Format.entryLine("note", 1, 2, `{"n":1}`) + Format.entryLine("note", 2, 3, `{"n":2}`))
      yield* until(2)
      const short = heard.find((a) => a.seq === 2)!
      assert.strictEqual(short.first, 1)
      assert.deepStrictEqual(short.entries?.map((e) => [e.seq, e.time, e.data]), [[1, 2, { n: 1 }], [2, 3, { n: 2 }]])
      // Longer than what is read whole: only its last line is read, and the core reads the rest.
      const long = "x".repeat(300 * 1024)
      appendFileSync(file, Format.entryLine("note", 3, 4, JSON.stringify({ long })) + Format.entryLine("note", 4, 5, "{}"))
      yield* until(4)
      const past = heard.filter((a) => a.seq === 4)
      assert.isNotEmpty(past)
      // The first heard is the commit's; a poll since may have repeated the session's announcement
      // since the watch began (its first seq then 1), with no entries either.
      assert.strictEqual(past[0]!.first, 3)
      for (const announcement of past) assert.isUndefined(announcement.entries)
    }).pipe(Effect.scoped, Effect.provide(NodeServices.layer)), 30_000)

  it.live("a session file replaced by a longer one: what follows the last line seen doesn't read on, and the new file's end is announced", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const directory = yield* fs.makeTempDirectoryScoped({ prefix: "todo-write-watch-" })
      const file = `${directory}/${Format.fileName("s")}`
      appendFileSync(file, header("s") + Format.entryLine("note", 0, 1, `{"n":0}`))
      const announcements = yield* Watcher.make(fs, yield* Path.Path, directory, {
        maxLineBytes: Scanner.defaultMaxLineBytes,
        owned: () => false,
        pollInterval: "50 millis"
      })
      const heard: Array<Watcher.Announcement> = []
      yield* Effect.forkScoped(Stream.runForEach(announcements, (announcement) => Effect.sync(() => heard.push(announcement))))
      // Another file, with longer lines, moved over it: the end of the line seen is inside its second line.
      const other = `${directory}/other.tmp`
      appendFileSync(
        other,
        header("s") + [0, 1, 2].map((n) => Format.entryLine("note", n, 1, JSON.stringify({ n, pad: "y".repeat(40) }))).join("")
      )
      yield* fs.rename(other, file)
      yield* Effect.suspend(() => heard.some((a) => a.seq === 2) ? Effect.void : Effect.fail("not yet")).pipe(
        Effect.retry(Schedule.spaced("20 millis")),
        Effect.timeoutOrElse({ duration: "10 seconds", orElse: () => Effect.fail("the new file's end was never announced") })
      )
      // Its end, found from its last line; none of it read as entries after the old line.
      for (const announcement of heard) assert.isUndefined(announcement.entries)
    }).pipe(Effect.scoped, Effect.provide(NodeServices.layer)), 30_000)
})

/**
 * The real file system, counting, per path, what the watch asks of it: opens, and stats (of a path,
 * or of an open file), and how many files are open now.
 */
const counting = (real: FileSystem.FileSystem) => {
  const asked = new Map<string, { opens: number; stats: number }>()
  const count = (path: string, what: "opens" | "stats") => {
    const calls = asked.get(path) ?? { opens: 0, stats: 0 }
    calls[what]++
    asked.set(path, calls)
  }
  let openNow = 0
  const fs = FileSystem.FileSystem.of({
    ...real,
    lstat: (path) => Effect.andThen(Effect.sync(() => count(path, "stats")), real.lstat(path)),
    stat: (path) => Effect.andThen(Effect.sync(() => count(path, "stats")), real.stat(path)),
    open: (path, options) =>
      Effect.gen(function*() {
        const file = yield* real.open(path, options)
        count(path, "opens")
        yield* Effect.acquireRelease(Effect.sync(() => openNow++), () => Effect.sync(() => openNow--))
        return new Proxy(file, {
          get: (target, key) => {
            if (key === "stat") return Effect.andThen(Effect.sync(() => count(path, "stats")), target.stat)
            const value: unknown = Reflect.get(target, key)
            return typeof value === "function" ? value.bind(target) : value
          }
        })
      })
  })
  return {
    fs,
    asked: (path: string) => ({ ...(asked.get(path) ?? { opens: 0, stats: 0 }) }),
    paths: () => [...asked.keys()],
    openNow: () => openNow
  }
}

describe("Watcher: files kept open", () => {
  it.live("a file that keeps changing is read through a handle kept open, with no open or stat per change; at most `keptFiles` stay open", () =>
    Effect.gen(function*() {
      const real = yield* FileSystem.FileSystem
      const directory = yield* real.makeTempDirectoryScoped({ prefix: "todo-write-watch-" })
      const fileOf = (session: string) => `${directory}/${Format.fileName(session)}`
      for (const session of ["a", "b", "c"]) appendFileSync(fileOf(session), header(session) + Format.entryLine("note", 0, 1, "{}"))
      const { asked, fs, openNow, paths } = counting(real)
      const announcements = yield* Watcher.make(fs, yield* Path.Path, directory, {
        maxLineBytes: Scanner.defaultMaxLineBytes,
        owned: () => false,
        // No poll during the test: what is read, the watch's changes read.
        pollInterval: "1 hour",
        keptFiles: 2
      })
      const heard: Array<Watcher.Announcement> = []
      yield* Effect.forkScoped(Stream.runForEach(announcements, (announcement) => Effect.sync(() => heard.push(announcement))))
      const commit = (session: string, seq: number) =>
        Effect.gen(function*() {
          appendFileSync(fileOf(session), Format.entryLine("note", seq, 1, JSON.stringify({ seq })))
          yield* Effect.suspend(() => heard.some((a) => a.session === session && a.seq === seq) ? Effect.void : Effect.fail("not yet")).pipe(
            Effect.retry(Schedule.spaced("10 millis")),
            Effect.timeoutOrElse({ duration: "10 seconds", orElse: () => Effect.fail(`${session}'s seq ${seq} was never announced`) })
          )
        })
      yield* commit("a", 1)
      const afterFirst = asked(fileOf("a"))
      assert.strictEqual(afterFirst.opens, 2, "opened for the first look, then kept open at the first change")
      for (let seq = 2; seq <= 6; seq++) yield* commit("a", seq)
      assert.deepStrictEqual(asked(fileOf("a")), afterFirst, "five more changes: no open, no stat")
      assert.deepStrictEqual(
        heard.filter((a) => a.session === "a").map((a) => [a.first, a.seq, a.entries?.map((e) => e.data)]),
        [1, 2, 3, 4, 5, 6].map((seq) => [seq, seq, [{ seq }]]),
        "each change announced once, with its entry"
      )
      yield* commit("b", 1)
      yield* commit("c", 1)
      assert.strictEqual(openNow(), 2, "b and c kept open, a closed to make room")
      // Files beside the sessions' change at every commit too (a journal, locks): the watch looks at none.
      appendFileSync(`${directory}/journal.wal`, "x")
      appendFileSync(`${directory}/a.lock`, "x")
      yield* commit("a", 7)
      assert.strictEqual(asked(fileOf("a")).opens, afterFirst.opens + 1, "a opened again")
      assert.strictEqual(openNow(), 2)
      assert.sameMembers(paths(), ["a", "b", "c"].map(fileOf), "only session files were looked at")
    }).pipe(Effect.scoped, Effect.provide(NodeServices.layer)), 30_000)

  for (const watched of [true, false]) {
    it.live(`a file kept open, then replaced: what is committed to the new file is announced (${watched ? "the watch's rename" : "the poll, without a watch"})`, () =>
      Effect.gen(function*() {
        const real = yield* FileSystem.FileSystem
        const directory = yield* real.makeTempDirectoryScoped({ prefix: "todo-write-watch-" })
        const { fs, openNow } = counting(real)
        const file = `${directory}/${Format.fileName("s")}`
        const lines = (to: number) =>
          header("s") + Array.from({ length: to + 1 }, (_, seq) => Format.entryLine("note", seq, 1, JSON.stringify({ seq }))).join("")
        appendFileSync(file, lines(0))
        const make = Watcher.make(fs, yield* Path.Path, directory, {
          maxLineBytes: Scanner.defaultMaxLineBytes,
          owned: () => false,
          pollInterval: watched ? "1 hour" : "50 millis",
          fallbackPollInterval: "50 millis"
        })
        const unwatchable = Layer.succeed(FileSystem.WatchBackend, {
          register: (path) =>
            Option.some(Stream.fail(PlatformError.systemError({ _tag: "Unknown", module: "FileSystem", method: "watch", pathOrDescriptor: path })))
        })
        const announcements = yield* (watched ? make : Effect.provide(make, unwatchable))
        const heard: Array<Watcher.Announcement> = []
        yield* Effect.forkScoped(Stream.runForEach(announcements, (announcement) => Effect.sync(() => heard.push(announcement))))
        const until = (seq: number) =>
          Effect.suspend(() => heard.some((a) => a.seq === seq) ? Effect.void : Effect.fail("not yet")).pipe(
            Effect.retry(Schedule.spaced("10 millis")),
            Effect.timeoutOrElse({ duration: "10 seconds", orElse: () => Effect.fail(`seq ${seq} was never announced`) })
          )
        appendFileSync(file, Format.entryLine("note", 1, 1, JSON.stringify({ seq: 1 })))
        yield* until(1) // read, and kept open
        // A copy with one more line moved over it (as a compaction would), then a commit to the copy.
        const copy = `${directory}/copy.tmp`
        appendFileSync(copy, lines(2))
        yield* fs.rename(copy, file)
        yield* until(2)
        appendFileSync(file, Format.entryLine("note", 3, 1, JSON.stringify({ seq: 3 })))
        yield* until(3)
        const last = heard.find((a) => a.seq === 3)!
        assert.deepStrictEqual(last.entries?.map((e) => e.data), [{ seq: 3 }], "read from the new file, after its last line seen")
        // Removed: the handle kept open is let go.
        assert.strictEqual(openNow(), 1)
        yield* fs.remove(file)
        yield* Effect.suspend(() => openNow() === 0 ? Effect.void : Effect.fail("still open")).pipe(
          Effect.retry(Schedule.spaced("10 millis")),
          Effect.timeoutOrElse({ duration: "10 seconds", orElse: () => Effect.fail("the removed file was never let go") })
        )
      }).pipe(Effect.scoped, Effect.provide(NodeServices.layer)), 30_000)
  }
})
