import { assert, describe, it } from "@effect/vitest"
import { Effect, FileSystem, Stream } from "effect"
import * as SessionLogFile from "../../../src/log/file/SessionLogFile.ts"
import * as TodoEvents from "../../../src/todo/TodoEvents.ts"
import { failureOf } from "../SessionLogConformance.ts"
import { fileOf, open, openRaw, readAll, session, todo, withDirectory } from "./FileTest.ts"

describe("Reader", () => {
  describe("the last line", () => {
    it.effect("a complete, checksummed last line without its newline is kept; its newline comes back before the next append", () =>
      withDirectory((directory) =>
        Effect.gen(function*() {
          const fs = yield* FileSystem.FileSystem
          yield* open(directory, (log) =>
            Effect.andThen(log.append(session, "todo/write", todo("one")), log.append(session, "todo/write", todo("two"))))
          const file = fileOf(directory)
          const whole = yield* fs.readFileString(file)
          yield* fs.truncate(file, whole.length - 1) // `truncate -s -1`: only the final newline goes
          // every entry loads, and verify finds nothing torn
          assert.deepStrictEqual((yield* open(directory, readAll)).map((e) => e.data), [todo("one"), todo("two")])
          const verified = yield* SessionLogFile.verify({ directory }, session, TodoEvents.invariants)
          assert.strictEqual(verified?.events, 2)
          assert.strictEqual(verified?.tornTailBytes, 0)
          // appending restores the newline first: the file is whole again, with all three entries
          assert.strictEqual((yield* open(directory, (log) => log.append(session, "todo/write", todo("three")))).seq, 2)
          const after = yield* fs.readFileString(file)
          assert.isTrue(after.startsWith(whole), "the second entry is intact, its newline restored")
          assert.deepStrictEqual(after.split("\n").map((line) => line === "" ? "" : JSON.parse(line).seq), [undefined, 0, 1, 2, ""])
          assert.deepStrictEqual((yield* open(directory, readAll)).map((e) => e.seq), [0, 1, 2])
        })
      ))

    it.effect("a newline-less last line whose checksum holds but whose seq is wrong is damage, not a torn tail", () =>
      withDirectory((directory) =>
        Effect.gen(function*() {
          const fs = yield* FileSystem.FileSystem
          yield* open(directory, (log) => log.append(session, "todo/write", todo("one")))
          const file = fileOf(directory)
          const whole = yield* fs.readFileString(file)
          const last = whole.trimEnd().split("\n").at(-1)!
          // the same line again, without a newline: a complete line, so not torn, and seq 0 repeats
          yield* fs.writeFileString(file, whole + last)
          const error = failureOf(yield* Effect.exit(open(directory, readAll)))
          assert.deepInclude(error.reason, { _tag: "Corrupt", line: 3 })
          assert.include(error.message, "repeats")
        })
      ))

    it.effect("a last line that isn't complete is still a torn tail: cut, and never read", () =>
      withDirectory((directory) =>
        Effect.gen(function*() {
          const fs = yield* FileSystem.FileSystem
          yield* open(directory, (log) => log.append(session, "todo/write", todo("one")))
          const file = fileOf(directory)
          const whole = yield* fs.readFileString(file)
          const torn = `{"type":"x","seq":1,"time":0,"data":{},"crc":"00000000"}`
          yield* fs.writeFileString(file, whole + torn)
          const verified = yield* SessionLogFile.verify({ directory }, session, TodoEvents.invariants)
          assert.deepInclude(verified, { events: 1, tornTailBytes: torn.length })
          assert.strictEqual((yield* open(directory, (log) => log.append(session, "n", {}))).seq, 1)
        })
      ))
  })

  describe("line length", () => {
    it.effect("a tail far longer than the line limit fails, naming the line, after reading no more than the limit", () =>
      withDirectory((directory) =>
        Effect.gen(function*() {
          const fs = yield* FileSystem.FileSystem
          yield* open(directory, (log) => log.append(session, "todo/write", todo("one")))
          const file = fileOf(directory)
          const size = (yield* fs.readFile(file)).length
          // a valid log, then 256 MiB of zeros with no newline (sparse: nothing is written)
          yield* fs.truncate(file, size + 256 * 1024 * 1024)
          let bytesRead = 0
          const real = yield* FileSystem.FileSystem
          const counting = FileSystem.FileSystem.of({
            ...real,
            open: (path, options) =>
              Effect.map(real.open(path, options), (handle) =>
                Object.create(handle, {
                  readAlloc: {
                    value: (n: number, o?: FileSystem.File.ReadOptions) =>
                      Effect.tap(handle.readAlloc(n, o), (read) => Effect.sync(() => bytesRead += read._tag === "Some" ? read.value.length : 0))
                  }
                }))
          })
          const limit = 1024 * 1024
          const error = failureOf(
            yield* Effect.exit(openRaw(directory, (log) => Stream.runCollect(log.read(session)), { maxLineBytes: limit }, counting))
          )
          assert.deepInclude(error.reason, { _tag: "Corrupt", line: 3 })
          assert.include(error.message, "longer than")
          assert.isAbove(bytesRead, 0, "the file is read through the FileSystem given")
          assert.isBelow(bytesRead, limit + 2 * 256 * 1024, `${bytesRead} bytes read`)
          // the default limit (4 MiB) holds too
          const byDefault = failureOf(yield* Effect.exit(open(directory, readAll)))
          assert.deepInclude(byDefault.reason, { _tag: "Corrupt", line: 3 })
          const verified = failureOf(yield* Effect.exit(SessionLogFile.verify({ directory }, session, TodoEvents.invariants)))
          assert.deepInclude(verified.reason, { _tag: "Corrupt", line: 3 })
        })
      ))

    it.effect("an event whose line would exceed the limit is refused on append, so every stored line can be read back", () =>
      withDirectory((directory) =>
        Effect.gen(function*() {
          const limit = 64 * 1024
          const error = failureOf(yield* Effect.exit(openRaw(directory, (log) =>
            log.append(session, "note", { text: "é".repeat(limit / 2) }), { maxLineBytes: limit })))
          assert.strictEqual(error.reason._tag, "InvalidPayload")
          const fits = yield* openRaw(directory, (log) =>
            Effect.andThen(log.append(session, "note", { text: "x".repeat(limit - 200) }), readAll(log)), { maxLineBytes: limit })
          assert.deepStrictEqual(fits.map((e) => e.seq), [0])
        })
      ))
  })
})
