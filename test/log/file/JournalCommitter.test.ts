/**
 * The journal's committer against lone batches committing beside it: whatever it writes ahead, it
 * never writes over a record a lone batch has committed, however often its fiber yields.
 */
import { NodeServices } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, FileSystem, Logger, Path, Scheduler, Scope } from "effect"
import { join } from "node:path"
import * as BlockingIo from "../../../src/log/file/BlockingIo.ts"
import * as Format from "../../../src/log/file/Format.ts"
import * as Journal from "../../../src/log/file/Journal.ts"
import * as JournalCommitter from "../../../src/log/file/JournalCommitter.ts"
import * as Owner from "../../../src/log/file/Owner.ts"
import { failing, systemError } from "./FileTest.ts"

/** The journals in `directory`. */
const journalsIn = (fs: FileSystem.FileSystem, directory: string) =>
  Effect.map(fs.readDirectory(directory), (names) => names.filter((name) => name.endsWith(Journal.extension)))

describe("JournalCommitter", () => {
  it.live("zeros written ahead never land on a record a lone batch committed meanwhile, however often the committer yields", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      const directory = yield* fs.makeTempDirectoryScoped({ prefix: "todo-write-committer-" })
      const scope = yield* Scope.make()
      const pooled = BlockingIo.fromFileSystem(fs)
      // A committer whose fiber yields every few steps: anything it reads before it marks the journal
      // busy may be stale by the time it writes.
      const committer = yield* JournalCommitter.make(fs, path, directory, scope, yield* Owner.self(fs), {
        checkpointBytes: 4 * 1024 * 1024,
        io: { ...BlockingIo.inPlace(BlockingIo.node, pooled), sync: pooled.sync }
      }).pipe(Effect.provideService(Scheduler.MaxOpsBeforeYield, 4))
      const session = yield* fs.open(join(directory, "s.jsonl"), { flag: "a+" })
      // Lone batches of ~150 KiB: the first ones bring the records within reach of the zeros' end.
      const line = Format.encodeLines(Format.entryLine("t", 0, 0, JSON.stringify("x".repeat(150 * 1024))))
      let acknowledged = 0
      for (let i = 0; i < 8; i++) {
        while (!committer.idle()) yield* Effect.yieldNow
        const failed = committer.commitBlocking({ session: "s", file: session, offset: acknowledged * line.length, bytes: line }, BlockingIo.node)
        assert.isUndefined(failed)
        acknowledged++
        yield* Effect.yieldNow
      }
      // The committer's upkeep done, then closed.
      yield* Effect.sleep("100 millis")
      const [name] = (yield* fs.readDirectory(directory)).filter((n) => n.endsWith(Journal.extension))
      const bytes = yield* fs.readFile(join(directory, name!))
      yield* Scope.close(scope, Exit.void)
      const parsed = Journal.parse(bytes)!
      assert.isUndefined(parsed.stoppedAt, "every record is whole")
      assert.strictEqual(parsed.records.length, acknowledged, "every acknowledged batch can be recovered")
    }).pipe(Effect.scoped, Effect.provide(NodeServices.layer)))

  it.effect("a checkpoint size smaller than the header writes nothing ahead: the journal is its header", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      const directory = yield* fs.makeTempDirectoryScoped({ prefix: "todo-write-committer-" })
      yield* JournalCommitter.make(fs, path, directory, yield* Effect.scope, yield* Owner.self(fs), {
        checkpointBytes: 16,
        io: BlockingIo.fromFileSystem(fs)
      })
      const [name] = yield* journalsIn(fs, directory)
      const bytes = yield* fs.readFile(join(directory, name!))
      assert.strictEqual(bytes.indexOf(10), bytes.length - 1, "one line, the header, and nothing after it")
      assert.deepStrictEqual(Journal.parse(bytes)?.records, [])
    }).pipe(Effect.scoped, Effect.provide(NodeServices.layer)))

  it.effect("a journal that can't be written ahead is not left behind, and the committer doesn't start", () =>
    Effect.gen(function*() {
      const real = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      const directory = yield* real.makeTempDirectoryScoped({ prefix: "todo-write-committer-" })
      let writes = 0
      // The header is written; the zeros after it find the disk full.
      const fs = failing(real, { write: () => ++writes === 2 ? systemError("ENOSPC", "writeAll", "journal") : undefined })
      const exit = yield* Effect.exit(JournalCommitter.make(fs, path, directory, yield* Effect.scope, yield* Owner.self(real), {
        checkpointBytes: 4 * 1024 * 1024,
        io: BlockingIo.fromFileSystem(fs)
      }))
      assert.isTrue(Exit.isFailure(exit))
      assert.strictEqual(writes, 2)
      assert.deepStrictEqual(yield* journalsIn(real, directory), [], "the half-written journal was removed")
    }).pipe(Effect.scoped, Effect.provide(NodeServices.layer)))

  it.live("a rotated journal that can't be removed is kept, with a warning; appends go on in the next", () =>
    Effect.gen(function*() {
      const real = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      const directory = yield* real.makeTempDirectoryScoped({ prefix: "todo-write-committer-" })
      const fs = FileSystem.FileSystem.of({
        ...real,
        remove: (p, o) => p.endsWith(Journal.extension) ? Effect.fail(systemError("EACCES", "remove", p)) : real.remove(p, o)
      })
      const warnings: Array<string> = []
      const capture = Logger.make(({ logLevel, message }) => {
        if (logLevel === "Warn") warnings.push(Array.isArray(message) ? message.join(" ") : String(message))
      })
      const committer = yield* JournalCommitter.make(fs, path, directory, yield* Effect.scope, yield* Owner.self(real), {
        checkpointBytes: 1024,
        io: BlockingIo.inPlace(BlockingIo.node, BlockingIo.fromFileSystem(real))
      }).pipe(Effect.provide(Logger.layer([capture])))
      const session = yield* real.open(join(directory, "s.jsonl"), { flag: "a+" })
      const line = Format.encodeLines(Format.entryLine("t", 0, 0, JSON.stringify("x".repeat(300))))
      for (let i = 0; i < 40 && warnings.length === 0; i++) {
        while (!committer.idle()) yield* Effect.sleep("1 millis")
        assert.isUndefined(committer.commitBlocking({ session: "s", file: session, offset: i * line.length, bytes: line }, BlockingIo.node))
        yield* Effect.sleep("1 millis")
      }
      assert.match(warnings[0] ?? "", /^SessionLogFile: .*\.wal kept: .*; it is removed on close$/)
      assert.isAtLeast((yield* journalsIn(real, directory)).length, 2, "the rotated journal stays beside the current one")
    }).pipe(Effect.scoped, Effect.provide(NodeServices.layer)))
})
