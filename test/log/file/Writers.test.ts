/**
 * Writers close when idle: a process appending to many sessions holds the locks and descriptors of
 * the sessions in use, not of every session it ever touched; a pinned (`open`) session stays held.
 */
import { NodeServices } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect, FileSystem, Layer } from "effect"
import * as Format from "../../../src/log/file/Format.ts"
import * as SessionLogFile from "../../../src/log/file/SessionLogFile.ts"
import * as SessionId from "../../../src/log/SessionId.ts"
import * as SessionLog from "../../../src/log/SessionLog.ts"

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
})
