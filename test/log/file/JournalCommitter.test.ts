/**
 * The journal's committer against lone batches committing beside it: whatever it writes ahead, it
 * never writes over a record a lone batch has committed, however often its fiber yields.
 */
import { NodeServices } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, FileSystem, Path, Scheduler, Scope } from "effect"
import { join } from "node:path"
import * as BlockingIo from "../../../src/log/file/BlockingIo.ts"
import * as Format from "../../../src/log/file/Format.ts"
import * as Journal from "../../../src/log/file/Journal.ts"
import * as JournalCommitter from "../../../src/log/file/JournalCommitter.ts"
import * as Owner from "../../../src/log/file/Owner.ts"

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
})
