import { assert, describe, it } from "@effect/vitest"
import { NodeServices } from "@effect/platform-node"
import { Effect, Exit, Fiber, FileSystem, Layer, PlatformError, Scope, Stream } from "effect"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import { join } from "node:path"
import { Worker } from "node:worker_threads"
import type * as IoCalls from "../../../src/log/file/IoCalls.ts"
import * as IoMessages from "../../../src/log/file/IoMessages.ts"
import * as IoThread from "../../../src/log/file/IoThread.ts"
import * as SessionLogFile from "../../../src/log/file/SessionLogFile.ts"
import * as SessionId from "../../../src/log/SessionId.ts"
import * as SessionLog from "../../../src/log/SessionLog.ts"
import * as TodoEvents from "../../../src/todo/TodoEvents.ts"
import * as Executables from "../../support/Executables.ts"
import { failureOf } from "../SessionLogConformance.ts"
import { errno, failing, failingCalls, fileOf, systemError, todo, withDirectory } from "./FileTest.ts"

const encoder = new TextEncoder()
const batch = (id: number, text: string): IoMessages.Batch => ({ id, header: new Uint8Array(0), lines: encoder.encode(text), write: undefined })

/** A thread, stopped with the scope it answers, and a journal in `directory` for it to write. */
const threadIn = (directory: string) =>
  Effect.gen(function*() {
    const scope = yield* Scope.make()
    const thread = yield* IoThread.make(scope)
    const journalPath = join(directory, "journal.wal")
    return { scope, thread, journalPath, journal: fs.openSync(journalPath, "w") }
  })

describe("IoThread", () => {
  it.effect("makes the calls on a thread of its own, in the order handed over, and stops with its scope", () =>
    withDirectory((directory) =>
      Effect.gen(function*() {
        const { journal, journalPath, scope, thread } = yield* threadIn(directory)
        // More than one group's worth, and a last group sent by the commit itself.
        const texts = Array.from({ length: 40 }, (_, i) => `batch ${i}\n`)
        texts.forEach((text, i) => thread.write(batch(i, text)))
        const first = yield* thread.postUnsafe(24, journal, 0)
        assert.isTrue(thread.threaded())
        assert.deepStrictEqual(first.ids, texts.slice(0, 25).map((_, i) => i))
        const second = yield* thread.postUnsafe(39, journal, first.stored)
        assert.strictEqual(second.ids.length, 15)
        assert.strictEqual(fs.readFileSync(journalPath, "utf8"), texts.join(""))
        yield* Scope.close(scope, Exit.void)
        assert.isFalse(thread.threaded())
        fs.closeSync(journal)
      })
    ))

  it.live("a commit posted runs on the thread at once, while its caller goes on; its answer waits until asked for", () =>
    withDirectory((directory) =>
      Effect.gen(function*() {
        const { journal, journalPath, scope, thread } = yield* threadIn(directory)
        thread.write(batch(0, "posted\n"))
        const answer = thread.postUnsafe(0, journal, 0)
        // Nothing has waited for it yet: the thread writes the journal all the same.
        while (fs.readFileSync(journalPath, "utf8") === "") yield* Effect.sleep("1 millis")
        yield* Effect.sleep("20 millis")
        const committed = yield* answer
        assert.deepStrictEqual(committed.ids, [0])
        assert.strictEqual(committed.stored, "posted\n".length)
        // The next, posted once that one is answered.
        thread.write(batch(1, "next\n"))
        assert.deepStrictEqual((yield* thread.postUnsafe(1, journal, committed.stored)).ids, [1])
        assert.strictEqual(fs.readFileSync(journalPath, "utf8"), "posted\nnext\n")
        yield* Scope.close(scope, Exit.void)
        fs.closeSync(journal)
      })
    ))

  it.effect("a thread that stops: batches not yet sent are made in place, before later ones, and commit in order", () =>
    withDirectory((directory) =>
      Effect.gen(function*() {
        const scope = yield* Scope.make()
        let spawned: Worker | undefined
        const thread = yield* IoThread.make(scope, (code) => spawned = new Worker(code, { eval: true }))
        const journalPath = join(directory, "journal.wal")
        const journal = fs.openSync(journalPath, "w")
        const texts = Array.from({ length: 19 }, (_, i) => `batch ${i}\n`)
        texts.slice(0, 16).forEach((text, i) => thread.write(batch(i, text)))
        const first = yield* thread.postUnsafe(15, journal, 0)
        thread.write(batch(16, texts[16]!))
        thread.write(batch(17, texts[17]!))
        const exited = new Promise((resolve) => spawned!.once("exit", resolve))
        yield* Effect.promise(() => spawned!.terminate().then(() => exited))
        assert.isFalse(thread.threaded())
        thread.write(batch(18, texts[18]!))
        const second = yield* thread.postUnsafe(17, journal, first.stored)
        assert.deepStrictEqual(second.ids, [16, 17])
        const third = yield* thread.postUnsafe(18, journal, first.stored + second.stored)
        assert.deepStrictEqual(third.ids, [18])
        assert.strictEqual(fs.readFileSync(journalPath, "utf8"), texts.join(""))
        yield* Scope.close(scope, Exit.void)
        fs.closeSync(journal)
      })
    ))

  it.effect("writes each batch to its writer's file, with writers told once and, past the thread's bound, let go of and told again", () =>
    withDirectory((directory) =>
      Effect.gen(function*() {
        const scope = yield* Scope.make()
        // At most 2 writers held by the thread, 5 writing in turn: most batches' writer was let go of.
        const thread = yield* IoThread.make(scope, undefined, 2)
        const writers = Array.from({ length: 5 }, (_, w) => {
          const path = join(directory, `session-${w}.jsonl`)
          const lock = `${path}.lock`
          fs.writeFileSync(lock, "held\n")
          const held = fs.lstatSync(lock, { bigint: true })
          const write: IoCalls.Write = { fd: fs.openSync(path, "a+"), path, directory, lock, lockDev: held.dev, lockIno: held.ino }
          return write
        })
        const journalPath = join(directory, "journal.wal")
        const journal = fs.openSync(journalPath, "w")
        // Writers in an order that lets go of some mid-group (groups of 16) and comes back to them.
        const order = Array.from({ length: 60 }, (_, i) => (i * 3 + (i >> 3)) % 5)
        order.forEach((w, i) =>
          thread.write({ id: i, header: encoder.encode(`<${i}>`), lines: encoder.encode(`batch ${i} of ${w}\n`), write: writers[w] })
        )
        const response = yield* thread.postUnsafe(order.length - 1, journal, 0)
        assert.deepStrictEqual(response.ids, order.map((_, i) => i))
        assert.strictEqual(response.writers, 2, "the thread holds as many writers as its bound")
        response.outcomes.forEach((outcome, i) => {
          assert.strictEqual(outcome._tag, "Durable", `batch ${i}`)
          const found = outcome._tag === "Durable" ? outcome.found : undefined
          assert.strictEqual(found?.ino, fs.statSync(writers[order[i]!]!.path, { bigint: true }).ino, `batch ${i} looked at its own file`)
        })
        writers.forEach((write, w) =>
          assert.strictEqual(
            fs.readFileSync(write.path, "utf8"),
            order.flatMap((writer, i) => writer === w ? [`batch ${i} of ${w}\n`] : []).join(""),
            `writer ${w}'s file holds its batches, in order`
          )
        )
        assert.strictEqual(fs.readFileSync(journalPath, "utf8"), order.map((w, i) => `<${i}>batch ${i} of ${w}\n`).join(""))
        yield* Scope.close(scope, Exit.void)
        writers.forEach((write) => fs.closeSync(write.fd))
        fs.closeSync(journal)
      })
    ))

  /**
   * A commit on a thread that never answers (`stopping` stops it while the commit waits, or, `posted`,
   * once it is posted and before it is waited for): answers the commit's exit, with the thread and its worker.
   */
  const waitingCommit = (directory: string, stopping: (worker: Worker) => Promise<unknown>, posted = false) =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      let spawned: Worker | undefined
      const thread = yield* IoThread.make(scope, () =>
        spawned = new Worker(`require("node:worker_threads").parentPort.on("message", () => {})`, { eval: true }))
      const journal = fs.openSync(join(directory, "journal.wal"), "w")
      thread.write(batch(0, "batch 0\n"))
      const answer = posted ? thread.postUnsafe(0, journal, 0) : thread.postUnsafe(0, journal, 0)
      const committing = posted ? undefined : yield* Effect.forkChild(Effect.exit(answer))
      while (spawned === undefined) yield* Effect.yieldNow
      const worker = spawned
      const exited = new Promise((resolve) => worker.once("exit", resolve))
      yield* Effect.promise(() => stopping(worker))
      const exit = committing === undefined ? yield* Effect.exit(answer) : yield* Fiber.join(committing)
      // Ended either way: it writes nothing more.
      yield* Effect.promise(() => exited)
      const threaded = thread.threaded()
      yield* Scope.close(scope, Exit.void)
      fs.closeSync(journal)
      return { exit, threaded }
    })

  it.effect("a commit in flight when the thread stops fails, saying why", () =>
    withDirectory((directory) =>
      Effect.gen(function*() {
        const { exit, threaded } = yield* waitingCommit(directory, (worker) => worker.terminate())
        assert.isTrue(Exit.isFailure(exit))
        const said = String(Exit.isFailure(exit) ? exit.cause : "")
        assert.include(said, "the journal's I/O thread exited")
        // Whether what it wrote to the journal is undone is the round's to say, once it has cut it back.
        assert.notInclude(said, "undone")
        assert.isFalse(threaded)
      })
    ))

  it.effect("a commit posted, whose thread stops before it is waited for: waiting for it fails, saying why", () =>
    withDirectory((directory) =>
      Effect.gen(function*() {
        const { exit, threaded } = yield* waitingCommit(directory, (worker) => worker.terminate(), true)
        assert.include(String(Exit.isFailure(exit) ? exit.cause : "not failed"), "the journal's I/O thread exited")
        assert.isFalse(threaded)
      })
    ))

  it.effect("a thread whose answer can't be read is stopped for good: the commit fails, and it writes nothing more", () =>
    withDirectory((directory) =>
      Effect.gen(function*() {
        const { exit, threaded } = yield* waitingCommit(directory, (worker) => Promise.resolve(worker.emit("messageerror", new Error("could not deserialize"))))
        assert.isTrue(Exit.isFailure(exit))
        assert.include(String(Exit.isFailure(exit) ? exit.cause : ""), "can't be read")
        assert.isFalse(threaded)
      })
    ))

  it("an idle thread keeps no process alive", () => {
    const directory = fs.mkdtempSync(join(fs.realpathSync("/tmp"), "todo-write-io-thread-"))
    try {
      // Bundled, as the package's bin is: the thread runs the calls' source text.
      const output = execFileSync(process.execPath, [Executables.ioThreadIdle, directory], { encoding: "utf8", timeout: 20_000 })
      assert.strictEqual(output, `threaded true stored 15 Durable,Durable,Durable ${JSON.stringify("line\nline\n")}\n`)
    } finally {
      fs.rmSync(directory, { recursive: true, force: true })
    }
  }, 30_000)
})

const session = SessionId.decodeSync("io-thread-session")

/**
 * A journal-mode log whose contended batches (all after a writer's first: the test clock never
 * moves) make `calls` through its I/O thread's code, in place; its other calls through `files`.
 */
const openedWith = (directory: string, calls: IoCalls.Calls, files?: FileSystem.FileSystem) =>
  Effect.map(
    Layer.build(
      SessionLogFile.layerFileSystem({ directory, journal: true }).pipe(
        Layer.provide(Layer.mergeAll(
          NodeServices.layer,
          Layer.succeed(IoThread.ThreadCalls, calls),
          files === undefined ? Layer.empty : Layer.succeed(FileSystem.FileSystem, files)
        ))
      )
    ),
    (context) => SessionLog.SessionLog.pipe(Effect.provide(context))
  )

describe("SessionLogFile (journal mode): the I/O thread's calls that fail", () => {
  it.effect("a journal that can't be synced fails the append; its lines are cut from the session file, and the next append follows", () =>
    withDirectory((directory) =>
      Effect.gen(function*() {
        let failures = 0
        const log = yield* yield* openedWith(directory, failingCalls((call) => call === "fdatasyncSync" && failures-- > 0 ? errno("EIO") : undefined))
        yield* log.append(session, "todo/write", todo("one"))
        failures = 1
        const error = failureOf(yield* Effect.exit(log.append(session, "todo/write", todo("two"))))
        assert.deepInclude(error.reason, { _tag: "StorageFailure", kind: "IoError" })
        assert.include(error.message, ".wal")
        assert.strictEqual(failures, 0, "the contended batch's commit went through the thread's calls")
        assert.strictEqual((yield* log.append(session, "todo/write", todo("three"))).seq, 1)
        const verified = yield* SessionLogFile.verify({ directory }, session, TodoEvents.invariants)
        assert.deepInclude(verified, { events: 2, tornTailBytes: 0 })
        assert.deepStrictEqual((yield* Stream.runCollect(log.read(session))).map((e) => e.data), [todo("one"), todo("three")])
      })
    ))

  it.effect("a journal that can't be synced nor cut back, and a session file its lines can't be cut from: the failure says both", () =>
    withDirectory((directory) =>
      Effect.gen(function*() {
        let broken = false
        const files = failing(yield* FileSystem.FileSystem, {
          truncate: (path) => broken && path === fileOf(directory, session) ? systemError("EROFS", "truncate", path) : undefined
        })
        const log = yield* yield* openedWith(
          directory,
          failingCalls((call) => broken && (call === "fdatasyncSync" || call === "ftruncateSync") ? errno("EIO") : undefined),
          files
        )
        yield* log.append(session, "todo/write", todo("one"))
        broken = true
        const error = failureOf(yield* Effect.exit(log.append(session, "todo/write", todo("two"))))
        assert.deepInclude(error.reason, { _tag: "StorageFailure", kind: "IoError" })
        assert.include(error.message, ".wal")
        assert.include(error.message, "could not be cut back: this batch may still be replayed after a crash")
        assert.include(error.message, `the failed batch could not be removed from ${fileOf(directory, session)} (the file system is read-only (EROFS, `)
        assert.include(error.message, "so some or all of it may appear")
        assert.deepInclude(error.reason, { maybeStored: true })
        assert.isTrue(PlatformError.isPlatformError(error.cause), "the journal's error stays the cause")
        broken = false
        const stopped = failureOf(yield* Effect.exit(log.append(session, "todo/write", todo("three"))))
        assert.include(stopped.message, "a failed write could not be cut from the file")
      })
    ))

  it.effect("a session file that can't be written fails the append as DiskFull; what reached it is cut", () =>
    withDirectory((directory) =>
      Effect.gen(function*() {
        let full = false
        const log = yield* yield* openedWith(directory, {
          ...failingCalls(() => undefined),
          // Half the batch reaches the file before the failure: what a full disk mid-write leaves.
          writeSync: (fd, buffer, offset, length, position) => {
            if (!full) return fs.writeSync(fd, buffer, offset, length, position)
            fs.writeSync(fd, buffer, offset, length >> 1, position)
            throw errno("ENOSPC")
          }
        })
        yield* log.append(session, "todo/write", todo("one"))
        full = true
        const error = failureOf(yield* Effect.exit(log.append(session, "todo/write", todo("two"))))
        assert.deepInclude(error.reason, { _tag: "StorageFailure", kind: "DiskFull" })
        assert.include(error.message, fileOf(directory, session))
        full = false
        assert.strictEqual((yield* log.append(session, "todo/write", todo("three"))).seq, 1)
        const verified = yield* SessionLogFile.verify({ directory }, session, TodoEvents.invariants)
        assert.deepInclude(verified, { events: 2, tornTailBytes: 0 })
      })
    ))

  it.effect("a lock that can't be looked at fails the append, writing nothing; the writer goes on", () =>
    withDirectory((directory) =>
      Effect.gen(function*() {
        let refuse = false
        const log = yield* yield* openedWith(directory, {
          ...failingCalls(() => undefined),
          lstatSync: (path, options) => {
            if (refuse && path.endsWith(".lock")) throw errno("EACCES")
            return fs.lstatSync(path, options)
          }
        })
        yield* log.append(session, "todo/write", todo("one"))
        refuse = true
        const error = failureOf(yield* Effect.exit(log.append(session, "todo/write", todo("two"))))
        assert.deepInclude(error.reason, { _tag: "StorageFailure", kind: "PermissionDenied" })
        assert.include(error.message, ".lock")
        refuse = false
        assert.strictEqual((yield* log.append(session, "todo/write", todo("three"))).seq, 1)
        const fsx = yield* FileSystem.FileSystem
        assert.notInclude(yield* fsx.readFileString(fileOf(directory, session)), "two")
      })
    ))
})
