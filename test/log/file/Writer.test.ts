import { assert, describe, it } from "@effect/vitest"
import { Effect, FileSystem, Layer, PlatformError, Stream } from "effect"
import * as SessionFile from "../../../src/log/file/Format.ts"
import * as SessionLogFile from "../../../src/log/file/SessionLogFile.ts"
import * as SessionLog from "../../../src/log/SessionLog.ts"
import * as TodoEvents from "../../../src/todo/TodoEvents.ts"
import { failureOf } from "../SessionLogConformance.ts"
import { failing, fileOf, layer, openRaw, session, systemError, todo, withDirectory } from "./FileTest.ts"

/** A log over `directory` that stays open for the rest of the test. */
const opened = (directory: string, options: { readonly journal?: boolean }) =>
  Effect.map(Layer.build(layer(directory, options)), (context) => SessionLog.SessionLog.pipe(Effect.provide(context)))

for (const mode of [{ name: "fsync mode", options: {} }, { name: "journal mode", options: { journal: true } }]) {
  describe(`Writer (${mode.name}): a writer stops acknowledging once its files are not its own`, () => {
    it.effect("the lock deleted by hand: a second writer takes over, and the first fails instead of interleaving", () =>
      withDirectory((directory) =>
        Effect.gen(function*() {
          const fs = yield* FileSystem.FileSystem
          const lockPath = `${directory}/${SessionFile.lockName(session)}`
          const first = yield* yield* opened(directory, mode.options)
          assert.strictEqual((yield* first.append(session, "todo/write", todo("one"))).seq, 0)
          yield* fs.remove(lockPath)
          const second = yield* yield* opened(directory, mode.options)
          assert.strictEqual((yield* second.append(session, "todo/write", todo("two"))).seq, 1)
          const error = failureOf(yield* Effect.exit(first.append(session, "todo/write", todo("three"))))
          assert.deepInclude(error.reason, { _tag: "OwnershipLost", path: lockPath })
          assert.include(error.message, "lock")
          // nothing of the refused append is in the file, and the second writer goes on
          assert.strictEqual((yield* second.append(session, "todo/write", todo("four"))).seq, 2)
          const verified = yield* SessionLogFile.verify({ directory }, session, TodoEvents.invariants)
          assert.deepInclude(verified, { events: 3, tornTailBytes: 0 })
          assert.deepStrictEqual(
            (yield* Stream.runCollect(second.read(session))).map((e) => e.data),
            [todo("one"), todo("two"), todo("four")]
          )
          // the first keeps refusing
          assert.strictEqual(failureOf(yield* Effect.exit(first.append(session, "n", {}))).reason._tag, "OwnershipLost")
        })
      ))

    it.effect("the lock deleted by hand with no other writer: the writer still stops acknowledging", () =>
      withDirectory((directory) =>
        Effect.gen(function*() {
          const fs = yield* FileSystem.FileSystem
          const log = yield* yield* opened(directory, mode.options)
          yield* log.append(session, "todo/write", todo("one"))
          yield* fs.remove(`${directory}/${SessionFile.lockName(session)}`)
          const error = failureOf(yield* Effect.exit(log.append(session, "todo/write", todo("two"))))
          assert.strictEqual(error.reason._tag, "OwnershipLost")
          const verified = yield* SessionLogFile.verify({ directory }, session, TodoEvents.invariants)
          assert.deepInclude(verified, { events: 1, tornTailBytes: 0 })
        })
      ))

    it.effect("the session file deleted under a running writer: the next append fails instead of vanishing", () =>
      withDirectory((directory) =>
        Effect.gen(function*() {
          const fs = yield* FileSystem.FileSystem
          const log = yield* yield* opened(directory, mode.options)
          yield* log.append(session, "todo/write", todo("one"))
          yield* fs.remove(fileOf(directory))
          const error = failureOf(yield* Effect.exit(log.append(session, "todo/write", todo("two"))))
          assert.deepInclude(error.reason, { _tag: "OwnershipLost", path: fileOf(directory) })
          assert.include(error.message, "deleted")
        })
      ))

    it.effect("the session file replaced under a running writer: the next append fails", () =>
      withDirectory((directory) =>
        Effect.gen(function*() {
          const fs = yield* FileSystem.FileSystem
          const log = yield* yield* opened(directory, mode.options)
          yield* log.append(session, "todo/write", todo("one"))
          const copy = `${directory}/copy`
          yield* fs.copyFile(fileOf(directory), copy)
          yield* fs.rename(copy, fileOf(directory))
          const error = failureOf(yield* Effect.exit(log.append(session, "todo/write", todo("two"))))
          assert.deepInclude(error.reason, { _tag: "OwnershipLost", path: fileOf(directory) })
        })
      ))
  })
}

describe("Writer: storage failures say what happened", () => {
  it.effect("a full disk fails the append as DiskFull, naming the session file; the file stays whole", () =>
    withDirectory((directory) =>
      Effect.gen(function*() {
        const real = yield* FileSystem.FileSystem
        let full = false
        const fs = failing(real, { write: () => full ? systemError("ENOSPC", "writeAll", 21) : undefined })
        yield* openRaw(directory, (log) =>
          Effect.gen(function*() {
            yield* log.append(session, "todo/write", todo("one"))
            full = true
            const error = failureOf(yield* Effect.exit(log.append(session, "todo/write", todo("two"))))
            assert.deepInclude(error.reason, { _tag: "StorageFailure", kind: "DiskFull" })
            assert.include(error.message, "the disk is full")
            assert.include(error.message, "ENOSPC")
            assert.include(error.message, fileOf(directory))
            assert.isTrue(PlatformError.isPlatformError(error.cause), "the PlatformError is the cause")
            full = false
            assert.strictEqual((yield* log.append(session, "todo/write", todo("three"))).seq, 1)
          }), {}, fs)
        const verified = yield* SessionLogFile.verify({ directory }, session, TodoEvents.invariants)
        assert.deepInclude(verified, { events: 2, tornTailBytes: 0 })
      })
    ))
})
