/**
 * Writers close when idle: a process appending to many sessions holds the locks and descriptors of
 * the sessions in use, not of every session it ever touched; a pinned (`open`) session stays held.
 */
import { NodeServices } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect, FileSystem, Layer, PlatformError } from "effect"
import * as BlockingIo from "../../../src/log/file/BlockingIo.ts"
import * as Format from "../../../src/log/file/Format.ts"
import * as IoThread from "../../../src/log/file/IoThread.ts"
import * as Journal from "../../../src/log/file/Journal.ts"
import * as SessionLogFile from "../../../src/log/file/SessionLogFile.ts"
import * as Writers from "../../../src/log/file/Writers.ts"
import * as SessionId from "../../../src/log/SessionId.ts"
import * as SessionLog from "../../../src/log/SessionLog.ts"
import { errno, failingCalls } from "./FileTest.ts"

const used = SessionId.decodeSync("used")
const pinned = SessionId.decodeSync("pinned")

describe("SessionLogFile writers", () => {
  it.live("an idle writer is closed and its lock released; the next append opens it again", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const directory = yield* fs.makeTempDirectoryScoped({ prefix: "todo-write-writers-" })
      const lockOf = (session: string) => `${directory}/${Format.lockName(session)}`
      yield* Effect.gen(function*() {
        const log = yield* SessionLog.SessionLog
        yield* log.append(used, "x", 1)
        assert.isTrue(yield* fs.exists(lockOf(used)), "held while in use")
        assert.isTrue(yield* fs.exists(lockOf(pinned)), "a pinned session is held from the start")
        yield* Effect.sleep("600 millis")
        assert.isFalse(yield* fs.exists(lockOf(used)), "released once idle")
        assert.isTrue(yield* fs.exists(lockOf(pinned)), "a pinned session stays held")
        assert.strictEqual((yield* log.append(used, "x", 2)).seq, 1)
        assert.isTrue(yield* fs.exists(lockOf(used)), "held again")
      }).pipe(
        Effect.provide(
          SessionLogFile.layerFileSystem({ directory, idleWriterTimeout: "200 millis", open: [pinned] }).pipe(
            Layer.provide(NodeServices.layer)
          )
        )
      )
      assert.isFalse(yield* fs.exists(lockOf(pinned)), "released when the log closes")
    }).pipe(Effect.provide(NodeServices.layer)))

  // Alone (no append within the contention window), a batch is stored with the blocking calls;
  // right after another, through the journal's I/O thread and its calls.
  for (const path of ["alone", "through the I/O thread"] as const) {
    it.live(`a writer whose failed batch may be replayed from the journal keeps its lock while idle, until the log closes (${path})`, () =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const directory = yield* fs.makeTempDirectoryScoped({ prefix: "todo-write-writers-" })
        const lockOf = (session: string) => `${directory}/${Format.lockName(session)}`
        let broken = false
        // Once broken, the journal can be neither synced nor cut back; the session file can still be cut.
        const eio = (method: string, target: string) =>
          PlatformError.systemError({ _tag: "Unknown", module: "FileSystem", method, pathOrDescriptor: target, cause: { code: "EIO" } })
        const journalBroken = (target: string) => broken && target.endsWith(Journal.extension)
        const blocking: BlockingIo.Blocking = {
          ...BlockingIo.node,
          datasync: (fd, target) => journalBroken(target) ? eio("fdatasync", target) : BlockingIo.node.datasync(fd, target),
          truncate: (fd, target, length) => journalBroken(target) ? eio("ftruncate", target) : BlockingIo.node.truncate(fd, target, length)
        }
        const calls = failingCalls((call) => broken && (call === "fdatasyncSync" || call === "ftruncateSync") ? errno("EIO") : undefined)
        yield* Effect.gen(function*() {
          const log = yield* SessionLog.SessionLog
          yield* log.append(used, "x", 1)
          broken = true
          if (path === "alone") yield* Effect.sleep(`${Writers.contentionWindowMs + 10} millis`)
          const failed = yield* Effect.flip(log.append(used, "x", 2))
          assert.deepInclude(failed.reason, { _tag: "StorageFailure", maybeStored: true })
          assert.include(failed.message, "may still be replayed after a crash")
          yield* Effect.sleep("600 millis")
          assert.isTrue(yield* fs.exists(lockOf(used)), "held while idle: another process appending where the batch may be replayed would lose its lines")
        }).pipe(
          Effect.provide(
            SessionLogFile.layerFileSystem({ directory, journal: true, idleWriterTimeout: "200 millis" }).pipe(
              Layer.provide(Layer.mergeAll(NodeServices.layer, Layer.succeed(BlockingIo.BlockingIo, blocking), Layer.succeed(IoThread.ThreadCalls, calls)))
            )
          )
        )
        assert.isFalse(yield* fs.exists(lockOf(used)), "released when the log closes")
      }).pipe(Effect.provide(NodeServices.layer)))
  }
})
