/**
 * Session ids become file names: an id that isn't a `SessionId`, from a caller that got around the
 * type (plain JavaScript, a cast), is refused by the log itself, before any I/O. The FileSystem is
 * recorded, so "before any I/O" is an observation, not a hope.
 */
import { NodeServices } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect, FileSystem, Layer, Stream } from "effect"
import * as SessionId from "../../../src/log/SessionId.ts"
import * as SessionLog from "../../../src/log/SessionLog.ts"
import * as SessionLogFile from "../../../src/log/file/SessionLogFile.ts"
import { failureOf } from "../SessionLogConformance.ts"
import * as Recording from "./RecordingFileSystem.ts"

const hostile = ["../x", "/etc/passwd", "a\u0000b", "x".repeat(1000), "NUL", "..", "a/../../b", "", "sub/dir"]

/** What a caller outside TypeScript's reach can pass. */
const unchecked = (id: string): SessionId.SessionId => id as SessionId.SessionId

describe("hostile session ids", () => {
  for (const journal of [false, true]) {
    it.effect(`are refused by the file log before any I/O${journal ? " (journal mode)" : ""}`, () =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const root = yield* fs.makeTempDirectoryScoped({ prefix: "todo-write-hostile-" })
        const directory = `${root}/sessions/inner`
        const recorder = Recording.make()
        yield* Effect.flatMap(SessionLog.SessionLog, (log) =>
          Effect.gen(function*() {
            const before = recorder.events.length
            for (const id of hostile) {
              const appended = failureOf(yield* Effect.exit(log.append(unchecked(id), "n", {})))
              assert.strictEqual(appended.reason._tag, "InvalidSessionId", JSON.stringify(id))
              assert.include(appended.message, "invalid session id")
              const read = failureOf(yield* Effect.exit(Stream.runCollect(log.read(unchecked(id)))))
              assert.strictEqual(read.reason._tag, "InvalidSessionId", JSON.stringify(id))
            }
            assert.deepStrictEqual(recorder.events.slice(before), [], "a hostile id reached the file system")
            // A valid id still works, after all that.
            assert.strictEqual((yield* log.append(SessionId.decodeSync("fine"), "n", {})).seq, 0)
          })).pipe(
            Effect.provide(SessionLogFile.layerFileSystem({ directory, journal }).pipe(
              Layer.provide(Layer.merge(NodeServices.layer, recorder.layer))
            ))
          )
        assert.deepStrictEqual(yield* fs.readDirectory(root), ["sessions"])
        assert.deepStrictEqual(yield* fs.readDirectory(`${root}/sessions`), ["inner"])
        assert.deepStrictEqual(yield* fs.readDirectory(directory), ["fine.jsonl"])
      }).pipe(Effect.provide(NodeServices.layer)))
  }

  it.effect("are refused by the in-memory log too (the core checks them, for every backend)", () =>
    Effect.gen(function*() {
      const log = yield* SessionLog.SessionLog
      for (const id of hostile) {
        assert.strictEqual(failureOf(yield* Effect.exit(log.append(unchecked(id), "n", {}))).reason._tag, "InvalidSessionId")
      }
      assert.deepStrictEqual(yield* log.sessions, [])
    }).pipe(Effect.provide(SessionLog.layerMemory)))
})
