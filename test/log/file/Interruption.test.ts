/**
 * File-system calls through the thread pool, interrupted while under way: the call goes on, its
 * answer unheard. The fakes here make the real system call at once and answer only later
 * (`answerLate`), as a call in libuv's thread pool whose fiber is interrupted does. (Found by a
 * second reader; each test failed before.)
 */
import { NodeServices } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Exit, FileSystem, Logger, Path, Scope } from "effect"
import { join } from "node:path"
import * as BlockingIo from "../../../src/log/file/BlockingIo.ts"
import * as Format from "../../../src/log/file/Format.ts"
import * as Journal from "../../../src/log/file/Journal.ts"
import * as JournalCommitter from "../../../src/log/file/JournalCommitter.ts"
import * as Owner from "../../../src/log/file/Owner.ts"
import * as SessionLogFile from "../../../src/log/file/SessionLogFile.ts"
import { overriding, session, withDirectory } from "./FileTest.ts"

const answerLate = <A, E>(call: Effect.Effect<A, E>, ms: number) => Effect.tap(call, () => Effect.sleep(`${ms} millis`))

describe("Interrupted thread-pool calls", () => {
  it.live("repair interrupted while its new lock's content is being written leaves no lock behind", () =>
    withDirectory((directory) =>
      Effect.gen(function*() {
        const real = yield* FileSystem.FileSystem
        const lockPath = join(directory, Format.lockName(session))
        let slow = true
        const fs = overriding(real, (path, file) =>
          path !== lockPath || !slow ? undefined : {
            // The content is written at once; the answer comes 200 ms later.
            writeAll: { value: (bytes: Uint8Array) => answerLate(file.writeAll(bytes), 200) }
          })
        const repair = SessionLogFile.repair({ directory }, session).pipe(Effect.provideService(FileSystem.FileSystem, fs))
        const first = yield* Effect.exit(Effect.timeout(repair, "30 millis"))
        assert.isTrue(Exit.isFailure(first), "the first repair timed out")
        yield* Effect.sleep("300 millis")
        slow = false
        const leftover = yield* real.exists(lockPath)
        const second = yield* Effect.exit(repair)
        assert.isFalse(leftover, "no lock file left by the interrupted repair")
        assert.isTrue(Exit.isSuccess(second), `a later repair takes the lock: ${Exit.isFailure(second) ? String(second.cause) : ""}`)
      })))

  it.live("a session file created by an interrupted repair (header written, its sync unanswered) gets its directory entry synced before anyone relies on it", () =>
    withDirectory((directory) =>
      Effect.gen(function*() {
        const real = yield* FileSystem.FileSystem
        const sessionPath = join(directory, Format.fileName(session))
        let slow = true
        let directorySyncs = 0
        const fs = overriding(real, (path, file) =>
          path === directory
            ? { sync: { get: () => Effect.andThen(Effect.sync(() => directorySyncs++), file.sync) } }
            : path !== sessionPath || !slow
            ? undefined
            // The header's fsync is made at once; its answer comes 200 ms later.
            : { sync: { get: () => answerLate(file.sync, 200) } })
        const repair = SessionLogFile.repair({ directory }, session).pipe(Effect.provideService(FileSystem.FileSystem, fs))
        const first = yield* Effect.exit(Effect.timeout(repair, "30 millis"))
        assert.isTrue(Exit.isFailure(first), "the first repair timed out")
        yield* Effect.sleep("300 millis")
        slow = false
        const second = yield* Effect.exit(repair)
        assert.isTrue(Exit.isSuccess(second), "the second repair opens the session")
        assert.isAbove(directorySyncs, 0, "the directory holding the new session file was synced")
      })))

  it.live("a retiring journal whose removal is under way as the log closes: the committer does not report a journal staying", () =>
    Effect.gen(function*() {
      const real = yield* FileSystem.FileSystem
      const directory = yield* real.makeTempDirectoryScoped({ prefix: "todo-write-interrupt-" })
      const removing = yield* Deferred.make<void>()
      const fs = FileSystem.FileSystem.of({
        ...real,
        remove: (path, o) =>
          !path.endsWith(Journal.extension)
            ? real.remove(path, o)
            // The unlink is made; its answer comes 300 ms later (still in the thread pool's queue of answers).
            : answerLate(Effect.tap(real.remove(path, o), () => Deferred.succeed(removing, undefined)), 300)
      })
      const scope = yield* Scope.make()
      const pooled = BlockingIo.fromFileSystem(fs)
      const committer = yield* JournalCommitter.make(fs, yield* Path.Path, directory, scope, yield* Owner.self(fs), {
        checkpointBytes: 1024,
        io: { ...BlockingIo.inPlace(BlockingIo.node, pooled), sync: pooled.sync }
      }).pipe(Effect.provide(Logger.layer([])))
      const f = yield* real.open(join(directory, "f.jsonl"), { flag: "a+" })
      const big = Format.encodeLines(Format.entryLine("t", 0, 0, JSON.stringify("x".repeat(1100))))
      yield* f.writeAll(big)
      // Fills the journal: it retires (syncs f, then is removed).
      assert.isUndefined(committer.commitBlocking({ session: "f", file: f, offset: 0, bytes: big }, BlockingIo.node))
      yield* Deferred.await(removing)
      // The log closes while the retired journal's unlink is under way.
      yield* Scope.close(scope, Exit.void)
      const left = (yield* real.readDirectory(directory)).filter((name) => name.endsWith(Journal.extension))
      assert.deepStrictEqual(left, [], "no journal is left on disk")
      assert.isFalse(committer.kept(), "so the committer says none stays (else held-back locks are kept)")
    }).pipe(Effect.scoped, Effect.provide(NodeServices.layer)))
})
