/**
 * Writers close when idle: a process appending to many sessions holds the locks and descriptors of
 * the sessions in use, not of every session it ever touched; a pinned (`open`) session stays held.
 */
import { NodeServices } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, FileSystem, Layer, PlatformError, Scope, Stream } from "effect"
import * as BlockingIo from "../../../src/log/file/BlockingIo.ts"
import * as Format from "../../../src/log/file/Format.ts"
import * as IoThread from "../../../src/log/file/IoThread.ts"
import * as Journal from "../../../src/log/file/Journal.ts"
import * as Lock from "../../../src/log/file/Lock.ts"
import * as Owner from "../../../src/log/file/Owner.ts"
import * as SessionLogFile from "../../../src/log/file/SessionLogFile.ts"
import * as Writers from "../../../src/log/file/Writers.ts"
import * as SessionId from "../../../src/log/SessionId.ts"
import * as SessionLog from "../../../src/log/SessionLog.ts"
import { errno, failing, failingCalls, systemError } from "./FileTest.ts"

const used = SessionId.decodeSync("used")
const pinned = SessionId.decodeSync("pinned")
const lockOf = (directory: string, session: string) => `${directory}/${Format.lockName(session)}`

describe("SessionLogFile writers", () => {
  it.live("an idle writer is closed and its lock released; the next append opens it again", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const directory = yield* fs.makeTempDirectoryScoped({ prefix: "todo-write-writers-" })
      yield* Effect.gen(function*() {
        const log = yield* SessionLog.SessionLog
        yield* log.append(used, "x", 1)
        assert.isTrue(yield* fs.exists(lockOf(directory, used)), "held while in use")
        assert.isTrue(yield* fs.exists(lockOf(directory, pinned)), "a pinned session is held from the start")
        yield* Effect.sleep("600 millis")
        assert.isFalse(yield* fs.exists(lockOf(directory, used)), "released once idle")
        assert.isTrue(yield* fs.exists(lockOf(directory, pinned)), "a pinned session stays held")
        assert.strictEqual((yield* log.append(used, "x", 2)).seq, 1)
        assert.isTrue(yield* fs.exists(lockOf(directory, used)), "held again")
      }).pipe(
        Effect.provide(
          SessionLogFile.layerFileSystem({ directory, idleWriterTimeout: "200 millis", open: [pinned] }).pipe(
            Layer.provide(NodeServices.layer)
          )
        )
      )
      assert.isFalse(yield* fs.exists(lockOf(directory, pinned)), "released when the log closes")
    }).pipe(Effect.provide(NodeServices.layer)))

  /**
   * A journal that, once `broken`, can be neither synced nor cut back, through both the blocking calls
   * and the I/O thread's (the session file can still be cut); `failed` counts the calls that failed.
   */
  const breakingJournal = () => {
    const state = { broken: false, failed: { blocking: 0, thread: 0 } }
    const eio = (method: string, target: string) => (state.failed.blocking++,
      PlatformError.systemError({ _tag: "Unknown", module: "FileSystem", method, pathOrDescriptor: target, cause: { code: "EIO" } }))
    const journalBroken = (target: string) => state.broken && target.endsWith(Journal.extension)
    const blocking: BlockingIo.Blocking = {
      ...BlockingIo.node,
      datasync: (fd, target) => journalBroken(target) ? eio("fdatasync", target) : BlockingIo.node.datasync(fd, target),
      truncate: (fd, target, length) => journalBroken(target) ? eio("ftruncate", target) : BlockingIo.node.truncate(fd, target, length)
    }
    const calls = failingCalls((call) =>
      state.broken && (call === "fdatasyncSync" || call === "ftruncateSync") ? (state.failed.thread++, errno("EIO")) : undefined
    )
    const layer = (directory: string, fs: FileSystem.FileSystem) =>
      SessionLogFile.layerFileSystem({ directory, journal: true, idleWriterTimeout: "200 millis" }).pipe(
        Layer.provide(Layer.mergeAll(
          NodeServices.layer,
          Layer.succeed(FileSystem.FileSystem, fs),
          Layer.succeed(BlockingIo.BlockingIo, blocking),
          Layer.succeed(IoThread.ThreadCalls, calls)
        ))
      )
    return { state, layer }
  }

  /** After one append, a second that fails and can't be cut back from the journal, `alone` or right after the first. */
  const failsReplayable = (state: ReturnType<typeof breakingJournal>["state"], alone: boolean) =>
    Effect.gen(function*() {
      const log = yield* SessionLog.SessionLog
      yield* log.append(used, "x", "one")
      state.broken = true
      // Alone (no append within the contention window), it is stored with the blocking calls; right
      // after another, through the journal's I/O thread.
      if (alone) yield* Effect.sleep(`${Writers.contentionWindowMs + 10} millis`)
      const failed = yield* Effect.flip(log.append(used, "x", "two, failed"))
      assert.deepInclude(failed.reason, { _tag: "StorageFailure", maybeStored: true })
      assert.include(failed.message, "may still be replayed after a crash")
      assert.isAbove(alone ? state.failed.blocking : state.failed.thread, 0, "the path meant")
    })

  for (const alone of [true, false]) {
    it.live(`a writer whose failed batch may be replayed from the journal keeps its lock while idle, and lets go of it only after the journal is removed (${alone ? "alone" : "through the I/O thread"})`, () =>
      Effect.gen(function*() {
        const real = yield* FileSystem.FileSystem
        const directory = yield* real.makeTempDirectoryScoped({ prefix: "todo-write-writers-" })
        const removed: Array<string> = []
        const fs = FileSystem.FileSystem.of({ ...real, remove: (path, options) => (removed.push(path), real.remove(path, options)) })
        const { layer, state } = breakingJournal()
        yield* Effect.gen(function*() {
          yield* failsReplayable(state, alone)
          yield* Effect.sleep("600 millis")
          assert.isTrue(yield* real.exists(lockOf(directory, used)), "held while idle: another process appending where the batch may be replayed would lose its lines")
        }).pipe(Effect.provide(layer(directory, fs)))
        assert.isFalse(yield* real.exists(lockOf(directory, used)), "released when the log closes")
        const journal = removed.findIndex((path) => path.endsWith(Journal.extension))
        assert.isAtLeast(journal, 0)
        assert.isAbove(removed.indexOf(lockOf(directory, used)), journal, "only once the journal is gone")
      }).pipe(Effect.provide(NodeServices.layer)))
  }

  it.live("another log's journal in the directory, of this same process, doesn't keep the lock: only this log's own would", () =>
    Effect.gen(function*() {
      const real = yield* FileSystem.FileSystem
      const directory = yield* real.makeTempDirectoryScoped({ prefix: "todo-write-writers-" })
      const { layer, state } = breakingJournal()
      const other = SessionLogFile.layerFileSystem({ directory, journal: true }).pipe(Layer.provide(NodeServices.layer))
      yield* Effect.gen(function*() {
        yield* Effect.flatMap(SessionLog.SessionLog, (log) => log.append(pinned, "x", "its own journal")).pipe(Effect.provide(other))
        yield* failsReplayable(state, true).pipe(Effect.provide(layer(directory, real)))
        const journals = (yield* real.readDirectory(directory)).filter((name) => name.endsWith(Journal.extension))
        assert.lengthOf(journals, 1, "the other log's journal, still open")
        assert.isFalse(yield* real.exists(lockOf(directory, used)), "released: this log's own journal was removed")
      }).pipe(Effect.provide(other))
    }).pipe(Effect.provide(NodeServices.layer)))

  it.live("a journal kept when the log closes keeps the lock of a session whose failed batch it may hold: taken over, and the journal replayed first, once this process is gone", () =>
    Effect.gen(function*() {
      const real = yield* FileSystem.FileSystem
      const directory = yield* real.makeTempDirectoryScoped({ prefix: "todo-write-writers-" })
      let closing = false
      // The session file can't be synced as the log closes: the journal covering it stays, for recovery.
      const fs = failing(real, { sync: (path) => closing && path.endsWith(Format.fileName(used)) ? systemError("EIO", "sync", path) : undefined })
      const { layer, state } = breakingJournal()
      yield* failsReplayable(state, true).pipe(
        Effect.andThen(Effect.sync(() => closing = true)),
        Effect.provide(layer(directory, fs))
      )
      const [journal, ...others] = (yield* real.readDirectory(directory)).filter((name) => name.endsWith(Journal.extension))
      assert.isDefined(journal, "the journal stays")
      assert.lengthOf(others, 0)
      assert.isTrue(yield* real.exists(lockOf(directory, used)), "and so does the lock")
      const plain = SessionLogFile.layerFileSystem({ directory }).pipe(Layer.provide(NodeServices.layer))
      const refused = yield* Effect.flip(Effect.flatMap(SessionLog.SessionLog, (log) => log.append(used, "x", "three")).pipe(Effect.provide(plain)))
      assert.deepInclude(refused.reason, { _tag: "Locked" })
      // This process gone: its journal and the lock name a process that no longer runs.
      const dead = { pid: 4_194_000, started: "1" }
      assert.isFalse(Owner.pidExists(dead.pid))
      const bytes = yield* real.readFile(`${directory}/${journal}`)
      const header = Journal.headerLine(dead, 0)
      const rest = bytes.subarray(bytes.indexOf(10) + 1)
      yield* real.writeFile(`${directory}/${Journal.fileName(dead.pid, "gone")}`, new Uint8Array([...header, ...rest]))
      yield* real.remove(`${directory}/${journal}`)
      yield* real.writeFileString(lockOf(directory, used), `${dead.pid} token ${dead.started}\n`)
      const read = yield* Effect.gen(function*() {
        const log = yield* SessionLog.SessionLog
        assert.strictEqual((yield* log.append(used, "x", "three")).seq, 2, "after the batch replayed, not over it")
        return (yield* Stream.runCollect(log.read(used))).map((entry) => entry.data)
      }).pipe(Effect.provide(plain))
      assert.deepStrictEqual(read, ["one", "two, failed", "three"], "the failed batch appears, as its failure said it might")
    }).pipe(Effect.provide(NodeServices.layer)))

  for (const journalStays of [false, true]) {
    it.live(`held-back locks close each on its own: one whose close fails leaves the others ${journalStays ? "kept, as the journal stays" : "released"}, and the log's close goes on`, () =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const directory = yield* fs.makeTempDirectoryScoped({ prefix: "todo-write-writers-" })
        const self = yield* Owner.self(fs)
        const log = yield* Scope.make()
        const heldBack = yield* Writers.holdBack.pipe(Scope.provide(log))
        heldBack.journalStays = () => journalStays
        for (const session of ["first", "second"]) {
          const scope = yield* Scope.make()
          const lock = yield* Lock.acquire(fs, lockOf(directory, session), self).pipe(Scope.provide(scope))
          // Its descriptor's close dies (`FileSystem` closes with `orDie`).
          if (session === "first") yield* Scope.addFinalizer(scope, Effect.die("the lock's descriptor could not be closed"))
          heldBack.locks.push({ lock, scope })
        }
        const closed = yield* Effect.exit(Scope.close(log, Exit.void))
        assert.isTrue(Exit.isSuccess(closed), "the log closes all the same")
        assert.strictEqual(yield* fs.exists(lockOf(directory, "second")), journalStays, journalStays ? "kept" : "released")
      }).pipe(Effect.provide(NodeServices.layer)))
  }

  /** The log in journal mode over `fs`, its writers closed after 200 ms idle, checkpointing every `checkpointBytes`. */
  const journaled = (directory: string, fs: FileSystem.FileSystem, checkpointBytes = 4 * 1024 * 1024) =>
    SessionLogFile.layerFileSystem({ directory, journal: { checkpointBytes }, idleWriterTimeout: "200 millis" }).pipe(
      Layer.provide(Layer.mergeAll(NodeServices.layer, Layer.succeed(FileSystem.FileSystem, fs)))
    )

  it.live("a session file whose sync fails as the log closes keeps the journal holding its appends, and its lock: taken over only once this process is gone", () =>
    Effect.gen(function*() {
      const real = yield* FileSystem.FileSystem
      const directory = yield* real.makeTempDirectoryScoped({ prefix: "todo-write-writers-" })
      let closing = false
      const fs = failing(real, { sync: (path) => closing && path.endsWith(Format.fileName(used)) ? systemError("EIO", "sync", path) : undefined })
      yield* Effect.flatMap(SessionLog.SessionLog, (log) => log.append(used, "x", "one")).pipe(
        Effect.andThen(Effect.sync(() => closing = true)),
        Effect.provide(journaled(directory, fs))
      )
      assert.lengthOf((yield* real.readDirectory(directory)).filter((name) => name.endsWith(Journal.extension)), 1, "the journal stays, for recovery")
      assert.isTrue(yield* real.exists(lockOf(directory, used)), "and so does the lock")
    }).pipe(Effect.provide(NodeServices.layer)))

  it.live("a writer whose file failed a checkpoint's sync is not closed as idle: it keeps its lock while a journal holding its appends stays", () =>
    Effect.gen(function*() {
      const real = yield* FileSystem.FileSystem
      const directory = yield* real.makeTempDirectoryScoped({ prefix: "todo-write-writers-" })
      let armed = false
      let failed = 0
      const fs = failing(real, {
        sync: (path) => armed && path.endsWith(Format.fileName(used)) ? (failed++, systemError("EIO", "sync", path)) : undefined
      })
      yield* Effect.gen(function*() {
        const log = yield* SessionLog.SessionLog
        yield* log.append(used, "x", "opened")
        armed = true
        // Past the checkpoint size: the journal retires, and its sync of the session file fails.
        for (let i = 0; i < 20 && failed === 0; i++) {
          yield* log.append(used, "x", "y".repeat(200))
          yield* Effect.sleep("20 millis")
        }
        assert.isAbove(failed, 0, "a checkpoint synced the session file, and it failed")
        yield* Effect.sleep("600 millis")
        assert.isTrue(yield* real.exists(lockOf(directory, used)), "still held, though idle")
        armed = false
        yield* log.append(used, "x", "by the same writer, still open")
      }).pipe(Effect.provide(journaled(directory, fs, 1024)))
    }).pipe(Effect.provide(NodeServices.layer)))
})
