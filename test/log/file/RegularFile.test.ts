import { assert, describe, it } from "@effect/vitest"
import { execFileSync } from "node:child_process"
import { closeSync, constants, openSync } from "node:fs"
import { Effect, type Exit, FileSystem, Stream } from "effect"
import * as SessionLogFile from "../../../src/log/file/SessionLogFile.ts"
import * as SessionId from "../../../src/log/SessionId.ts"
import * as TodoEvents from "../../../src/todo/TodoEvents.ts"
import { failureOf } from "../SessionLogConformance.ts"
import { fileOf, openRaw, todo, withDirectory } from "./FileTest.ts"

const a = SessionId.decodeSync("a")

/** The log's error, or a failed assertion if the effect timed out (hung) instead. */
const logError = <A, E extends { readonly _tag: string }>(exit: Exit.Exit<A, E>) => {
  const error = failureOf(exit)
  if (error._tag !== "SessionLogError") assert.fail(`expected a SessionLogError, got ${error._tag}`)
  return error as Extract<E, { readonly _tag: "SessionLogError" }>
}

describe("RegularFile: the log never follows a link or opens anything but a regular file", () => {
  it.effect("a session file that links to a file outside the directory is refused, and the target is untouched", () =>
    withDirectory((root) =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const directory = `${root}/sessions`
        yield* fs.makeDirectory(directory)
        for (const content of ["precious\n", ""]) {
          const outside = `${root}/outside-${content.length}`
          yield* fs.writeFileString(outside, content)
          yield* fs.remove(fileOf(directory, a), { force: true })
          yield* fs.symlink(outside, fileOf(directory, a))
          const error = failureOf(yield* Effect.exit(openRaw(directory, (log) => log.append(a, "todo/write", todo("x")))))
          assert.strictEqual(error.reason._tag, "UnsafePath")
          assert.include(error.message, fileOf(directory, a))
          assert.include(error.message, "symbolic link")
          assert.strictEqual(yield* fs.readFileString(outside), content, "the outside file is untouched")
          const read = failureOf(yield* Effect.exit(openRaw(directory, (log) => Stream.runCollect(log.read(a)))))
          assert.strictEqual(read.reason._tag, "UnsafePath")
        }
      })
    ))

  it.effect("a dangling link creates no file outside the directory", () =>
    withDirectory((root) =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const directory = `${root}/sessions`
        yield* fs.makeDirectory(directory)
        yield* fs.symlink(`${root}/created-outside`, fileOf(directory, a))
        const error = failureOf(yield* Effect.exit(openRaw(directory, (log) => log.append(a, "todo/write", todo("x")))))
        assert.strictEqual(error.reason._tag, "UnsafePath")
        assert.isFalse(yield* fs.exists(`${root}/created-outside`))
        const verified = failureOf(yield* Effect.exit(SessionLogFile.verify({ directory }, a, TodoEvents.invariants)))
        assert.strictEqual(verified.reason._tag, "UnsafePath")
      })
    ))

  it.live("a FIFO named like a session file fails reads and verify at once instead of hanging", () =>
    withDirectory((directory) =>
      Effect.gen(function*() {
        const fifo = fileOf(directory, a)
        execFileSync("mkfifo", [fifo])
        // Should a read ever block on the FIFO, opening its other end releases it, so the suite can't hang.
        yield* Effect.addFinalizer(() =>
          Effect.sync(() => closeSync(openSync(fifo, constants.O_RDWR | constants.O_NONBLOCK))).pipe(Effect.ignore)
        )
        const read = logError(
          yield* Effect.exit(openRaw(directory, (log) => Stream.runCollect(log.read(a))).pipe(Effect.timeout("5 seconds")))
        )
        assert.deepInclude(read.reason, { _tag: "UnsafePath", path: fifo })
        assert.include(read.message, "FIFO")
        const verified = logError(
          yield* Effect.exit(SessionLogFile.verify({ directory }, a, TodoEvents.invariants).pipe(Effect.timeout("5 seconds")))
        )
        assert.deepInclude(verified.reason, { _tag: "UnsafePath", path: fifo })
        const append = logError(
          yield* Effect.exit(openRaw(directory, (log) => log.append(a, "x", {})).pipe(Effect.timeout("5 seconds")))
        )
        assert.deepInclude(append.reason, { _tag: "UnsafePath", path: fifo })
      })
    ))
})
