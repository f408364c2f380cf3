/**
 * The journal's committer against lone batches committing beside it (whatever it writes ahead, it
 * never writes over a record a lone batch has committed, however often its fiber yields), and what a
 * failed write of the journal leaves: a journal cut back to its last record, or, if it can't be cut,
 * one that refuses every later batch.
 */
import { NodeServices } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Context, Deferred, Effect, Exit, Fiber, FileSystem, Layer, Logger, Option, Path, PlatformError, Schedule, Scheduler, Scope } from "effect"
import { statSync } from "node:fs"
import { join } from "node:path"
import * as BlockingIo from "../../../src/log/file/BlockingIo.ts"
import * as Format from "../../../src/log/file/Format.ts"
import type * as IoCalls from "../../../src/log/file/IoCalls.ts"
import * as Journal from "../../../src/log/file/Journal.ts"
import * as JournalCommitter from "../../../src/log/file/JournalCommitter.ts"
import * as JournalFile from "../../../src/log/file/JournalFile.ts"
import * as JournalRound from "../../../src/log/file/JournalRound.ts"
import * as Owner from "../../../src/log/file/Owner.ts"
import * as SessionLogFile from "../../../src/log/file/SessionLogFile.ts"
import * as StorageFailures from "../../../src/log/internal/storageFailure.ts"
import * as SessionId from "../../../src/log/SessionId.ts"
import * as SessionLog from "../../../src/log/SessionLog.ts"
import { failing, systemError } from "./FileTest.ts"

/**
 * A committer over a fresh directory, its lone commits made through `blocking`, its own syncs
 * waiting for `gate` when one is given; a session file to commit batches of, and what the journal
 * holds now.
 */
const harness = (blocking: BlockingIo.Blocking, gate?: Deferred.Deferred<void>) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const directory = yield* fs.makeTempDirectoryScoped({ prefix: "todo-write-committer-" })
    const pooled = BlockingIo.fromFileSystem(fs)
    const committer = yield* JournalCommitter.make(fs, yield* Path.Path, directory, yield* Effect.scope, yield* Owner.self(fs), {
      checkpointBytes: 4 * 1024 * 1024,
      io: {
        ...BlockingIo.inPlace(blocking, pooled),
        sync: (file, p) => gate === undefined ? pooled.sync(file, p) : Effect.andThen(Deferred.await(gate), pooled.sync(file, p))
      }
    })
    const session = yield* fs.open(join(directory, "s.jsonl"), { flag: "a+" })
    const line = (n: number) => Format.encodeLines(Format.entryLine("t", n, 0, `{"n":${n}}`))
    const chunk = (n: number) => ({ session: "s", file: session, offset: n * line(0).length, bytes: line(n) })
    const journal = Effect.gen(function*() {
      const [name] = yield* journalsIn(fs, directory)
      return Journal.parse(yield* fs.readFile(join(directory, name!)))!
    })
    return { committer, chunk, journal, blocking }
  })

/** Node's blocking calls, but `fail` may answer an error for a write or a truncation of the journal instead. */
const journalFailing = (fail: (call: "write" | "truncate") => PlatformError.PlatformError | undefined): BlockingIo.Blocking => ({
  ...BlockingIo.node,
  writeAt: (fd, p, bytes, position) =>
    p.endsWith(Journal.extension) ? fail("write") ?? BlockingIo.node.writeAt(fd, p, bytes, position) : BlockingIo.node.writeAt(fd, p, bytes, position),
  truncate: (fd, p, length) => p.endsWith(Journal.extension) ? fail("truncate") ?? BlockingIo.node.truncate(fd, p, length) : BlockingIo.node.truncate(fd, p, length)
})

/** Node's blocking calls, but the journal's next write after `next()` finds the disk full. */
const diskFullOnce = () => {
  let armed = false
  const blocking = journalFailing((call) => {
    if (call !== "write" || !armed) return undefined
    armed = false
    return systemError("ENOSPC", "writeAll", "journal")
  })
  return { blocking, next: () => (armed = true) }
}

/** Waits (up to 10 s) for a warning: a checkpoint's retirement runs in the background, later on a busy machine. */
const warned = (warnings: ReadonlyArray<string>) =>
  Effect.suspend(() => warnings.length > 0 ? Effect.void : Effect.fail("no warning yet")).pipe(
    Effect.retry(Schedule.spaced("5 millis")),
    Effect.timeout("10 seconds"),
    Effect.orElseSucceed(() => undefined)
  )

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

  it.live("zeros written ahead go in pieces, the event loop turning between them", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const directory = yield* fs.makeTempDirectoryScoped({ prefix: "todo-write-committer-" })
      const scope = yield* Scope.make()
      const pooled = BlockingIo.fromFileSystem(fs)
      const inPlace = BlockingIo.inPlace(BlockingIo.node, pooled)
      // Turns of the event loop, counted by a callback that runs once per turn.
      let turns = 0
      let counting = true
      const count = () => {
        turns++
        if (counting) setImmediate(count)
      }
      count()
      // The turn each write of zeros (past the first zeros) was made in.
      const pieces: Array<number> = []
      const committer = yield* JournalCommitter.make(fs, yield* Path.Path, directory, scope, yield* Owner.self(fs), {
        checkpointBytes: 4 * 1024 * 1024,
        io: {
          ...inPlace,
          sync: pooled.sync,
          writeAt: (file, p, bytes, at) => {
            if (at >= JournalFile.firstAhead && bytes.every((byte) => byte === 0)) pieces.push(turns)
            return inPlace.writeAt(file, p, bytes, at)
          }
        }
      })
      const session = yield* fs.open(join(directory, "s.jsonl"), { flag: "a+" })
      // Lone batches of ~150 KiB: the first ones bring the records within reach of the zeros' end.
      const line = Format.encodeLines(Format.entryLine("t", 0, 0, JSON.stringify("x".repeat(150 * 1024))))
      for (let i = 0; i < 2; i++) {
        while (!committer.idle()) yield* Effect.yieldNow
        assert.isUndefined(committer.commitBlocking({ session: "s", file: session, offset: i * line.length, bytes: line }, BlockingIo.node))
      }
      while (pieces.length < JournalFile.aheadChunk / JournalFile.aheadPiece) yield* Effect.sleep("5 millis")
      counting = false
      yield* Scope.close(scope, Exit.void)
      for (let i = 1; i < pieces.length; i++) assert.isAbove(pieces[i]!, pieces[i - 1]!, `piece ${i} in a later turn than the one before it`)
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
      yield* warned(warnings)
      assert.match(warnings[0] ?? "", /^SessionLogFile: .*\.wal kept: .*; it is removed on close$/)
      assert.isAtLeast((yield* journalsIn(real, directory)).length, 2, "the rotated journal stays beside the current one")
    }).pipe(Effect.scoped, Effect.provide(NodeServices.layer)))

  it.live("a session file whose sync failed as its writer closed is never synced again by a retiring journal, which stays for recovery", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const directory = yield* fs.makeTempDirectoryScoped({ prefix: "todo-write-committer-" })
      const warnings: Array<string> = []
      const capture = Logger.make(({ logLevel, message }) => {
        if (logLevel === "Warn") warnings.push(Array.isArray(message) ? message.join(" ") : String(message))
      })
      const committer = yield* JournalCommitter.make(fs, yield* Path.Path, directory, yield* Effect.scope, yield* Owner.self(fs), {
        checkpointBytes: 1024,
        io: BlockingIo.inPlace(BlockingIo.node, BlockingIo.fromFileSystem(fs))
      }).pipe(Effect.provide(Logger.layer([capture])))
      // A session file whose every sync fails; once its writer closed it, its descriptor may name
      // another file, so a sync of it must not even be tried.
      const closing = yield* fs.open(join(directory, "closing.jsonl"), { flag: "a+" })
      let syncs = 0
      const failing: FileSystem.File = Object.create(closing, {
        sync: { get: () => Effect.suspend(() => (syncs++, Effect.fail(systemError("EIO", "sync", "closing.jsonl")))) }
      })
      const line = Format.encodeLines(Format.entryLine("t", 0, 0, JSON.stringify("x".repeat(300))))
      assert.isUndefined(committer.commitBlocking({ session: "closing", file: failing, offset: 0, bytes: line }, BlockingIo.node))
      yield* committer.release(failing)
      assert.strictEqual(syncs, 1, "its writer tried to sync it as it closed")
      const [covering] = yield* journalsIn(fs, directory)
      // Another session's batches fill the journal: a checkpoint retires it.
      const other = yield* fs.open(join(directory, "other.jsonl"), { flag: "a+" })
      for (let i = 0; i < 40 && warnings.length === 0; i++) {
        while (!committer.idle()) yield* Effect.sleep("1 millis")
        assert.isUndefined(committer.commitBlocking({ session: "other", file: other, offset: i * line.length, bytes: line }, BlockingIo.node))
        yield* Effect.sleep("1 millis")
      }
      yield* warned(warnings)
      assert.match(warnings[0] ?? "", /\.wal kept: a session file it covers could not be synced/)
      assert.strictEqual(syncs, 1, "the retiring journal did not sync it")
      assert.include(yield* journalsIn(fs, directory), covering!, "the journal covering it stays, for recovery to replay")
    }).pipe(Effect.scoped, Effect.provide(NodeServices.layer)))

  for (const retireFails of [false, true]) {
    it.live(
      retireFails
        ? "a retiring journal whose session file fails to sync stays for recovery, even once the file's writer syncs it as it closes"
        : "a writer closing syncs its file only after a retiring journal's sync of it: never two at once, which could each take the other's write-back error for its own",
      () =>
        Effect.gen(function*() {
          const fs = yield* FileSystem.FileSystem
          const directory = yield* fs.makeTempDirectoryScoped({ prefix: "todo-write-committer-" })
          const scope = yield* Scope.make()
          const committer = yield* JournalCommitter.make(fs, yield* Path.Path, directory, scope, yield* Owner.self(fs), {
            checkpointBytes: 1024,
            io: BlockingIo.inPlace(BlockingIo.node, BlockingIo.fromFileSystem(fs))
          }).pipe(Effect.provide(Logger.layer([])))
          const real = yield* fs.open(join(directory, "f.jsonl"), { flag: "a+" })
          const reached = yield* Deferred.make<void>()
          const gate = yield* Deferred.make<void>()
          // The retiring journal's sync of f (the first) waits at the gate, or fails; the writer's, next, passes.
          let syncs = 0
          let inFlight = 0
          let overlapped = false
          const f: FileSystem.File = Object.create(real, {
            sync: {
              get: () =>
                Effect.suspend(() => {
                  const n = ++syncs
                  overlapped ||= inFlight > 0
                  inFlight++
                  const sync = n > 1
                    ? real.sync
                    : retireFails
                    ? Effect.fail(systemError("EIO", "sync", "f.jsonl"))
                    : Effect.andThen(Effect.andThen(Deferred.succeed(reached, undefined), Deferred.await(gate)), real.sync)
                  return Effect.ensuring(sync, Effect.sync(() => inFlight--))
                })
            }
          })
          const other = yield* fs.open(join(directory, "other.jsonl"), { flag: "a+" })
          const line = Format.encodeLines(Format.entryLine("t", 0, 0, JSON.stringify("x".repeat(300))))
          assert.isUndefined(committer.commitBlocking({ session: "f", file: f, offset: 0, bytes: line }, BlockingIo.node))
          const [covering] = yield* journalsIn(fs, directory)
          // Another session's batches fill the journal: a checkpoint retires it, syncing f.
          for (let i = 0; i < 40 && syncs === 0; i++) {
            while (!committer.idle()) yield* Effect.sleep("1 millis")
            assert.isUndefined(committer.commitBlocking({ session: "other", file: other, offset: i * line.length, bytes: line }, BlockingIo.node))
            yield* Effect.sleep("2 millis")
          }
          if (retireFails) yield* Effect.sleep("50 millis")
          else yield* Deferred.await(reached)
          // f's writer closes.
          const releasing = yield* Effect.forkChild(committer.release(f))
          yield* Effect.sleep("30 millis")
          if (!retireFails) {
            assert.strictEqual(syncs, 1, "the writer's sync waits for the retiring journal's")
            yield* Deferred.succeed(gate, undefined)
          }
          yield* Fiber.join(releasing)
          yield* committer.release(other)
          yield* Scope.close(scope, Exit.void)
          assert.isFalse(overlapped, "never two syncs of f at once")
          assert.strictEqual(syncs, 2)
          const left = yield* journalsIn(fs, directory)
          if (retireFails) assert.include(left, covering!, "the journal covering f stays, for recovery to replay")
          else assert.notInclude(left, covering!, "the retired journal went once f was synced")
        }).pipe(Effect.scoped, Effect.provide(NodeServices.layer))
    )
  }

  it.effect("a lone batch whose journal write fails is cut from the journal; the next one goes where it would have", () =>
    Effect.gen(function*() {
      const full = diskFullOnce()
      const h = yield* harness(full.blocking)
      assert.isUndefined(h.committer.commitBlocking(h.chunk(0), h.blocking))
      full.next()
      assert.strictEqual(h.committer.commitBlocking(h.chunk(1), h.blocking)?._tag, "PlatformError")
      assert.isUndefined(h.committer.commitBlocking(h.chunk(2), h.blocking))
      const journal = yield* h.journal
      assert.isUndefined(journal.stoppedAt)
      assert.deepStrictEqual(journal.records.map((r) => r.offset), [h.chunk(0).offset, h.chunk(2).offset], "only what was acknowledged")
    }).pipe(Effect.scoped, Effect.provide(NodeServices.layer)))

  it.effect("a journal whose failed write can't be cut refuses every later batch, saying so", () =>
    Effect.gen(function*() {
      let broken = false
      const h = yield* harness(journalFailing(() => broken ? systemError("EIO", "writeAll", "journal") : undefined))
      assert.isUndefined(h.committer.commitBlocking(h.chunk(0), h.blocking))
      broken = true
      // Its records may stay in the journal: it says so, and why it failed.
      const failed = StorageFailures.toError("append")(h.committer.commitBlocking(h.chunk(1), h.blocking)!)
      assert.deepInclude(failed.reason, { _tag: "StorageFailure", kind: "IoError", maybeStored: true })
      assert.include(failed.message, "could not be cut back: this batch may still be replayed after a crash")
      assert.isTrue(PlatformError.isPlatformError(failed.cause), "the foreign error stays the cause")
      broken = false
      const refused = h.committer.commitBlocking(h.chunk(2), h.blocking)
      assert.include(refused?._tag === "StorageFailure" ? refused.detail : "", "can't be repaired after a failed write")
      const viaCommitter = yield* Effect.flip(h.committer.commit(h.chunk(2)))
      assert.strictEqual(viaCommitter._tag, "StorageFailure", "the committer refuses it too")
      assert.deepStrictEqual((yield* h.journal).records.length, 1)
    }).pipe(Effect.scoped, Effect.provide(NodeServices.layer)))

  it.effect("while the committer writes the journal, it is not idle, and a lone commit is refused rather than interleaved", () =>
    Effect.gen(function*() {
      const gate = yield* Deferred.make<void>()
      const h = yield* harness(BlockingIo.node, gate)
      const committing = yield* Effect.forkChild(h.committer.commit(h.chunk(0)))
      while (h.committer.idle()) yield* Effect.yieldNow
      const refused = h.committer.commitBlocking(h.chunk(1), h.blocking)
      assert.include(refused?._tag === "StorageFailure" ? refused.detail : "", "is being written by its committer")
      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.join(committing)
      while (!h.committer.idle()) yield* Effect.yieldNow
      assert.isUndefined(h.committer.commitBlocking(h.chunk(1), h.blocking))
      assert.deepStrictEqual((yield* h.journal).records.map((r) => r.offset), [h.chunk(0).offset, h.chunk(1).offset])
    }).pipe(Effect.scoped, Effect.provide(NodeServices.layer)))

  it.effect("closing the committer while a round is in flight: chunks offered meanwhile are stored and answered, later ones refused", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const directory = yield* fs.makeTempDirectoryScoped({ prefix: "todo-write-committer-" })
      const session = yield* fs.open(join(directory, "s.jsonl"), { flag: "a+" })
      const line = (n: number) => Format.encodeLines(Format.entryLine("t", n, 0, `{"n":${n}}`))
      const chunk = (n: number) => ({ session: "s", file: session, offset: n * line(0).length, bytes: line(n) })
      const gate = yield* Deferred.make<void>()
      const pooled = BlockingIo.fromFileSystem(fs)
      const scope = yield* Scope.make()
      const committer = yield* JournalCommitter.make(fs, yield* Path.Path, directory, scope, yield* Owner.self(fs), {
        checkpointBytes: 4 * 1024 * 1024,
        // The committer's syncs wait for the gate.
        io: { ...BlockingIo.inPlace(BlockingIo.node, pooled), sync: (file, p) => Effect.andThen(Deferred.await(gate), pooled.sync(file, p)) }
      })
      const first = yield* Effect.forkChild(committer.commit(chunk(0)))
      while (committer.idle()) yield* Effect.yieldNow
      // Offered while the round storing the first is in flight; the log closes before the next round.
      const second = yield* Effect.forkChild(committer.commit(chunk(1)))
      yield* Effect.yieldNow
      const closing = yield* Effect.forkChild(Scope.close(scope, Exit.void))
      yield* Effect.yieldNow
      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.join(closing)
      assert.isTrue(Exit.isSuccess(yield* Fiber.await(first)))
      assert.isTrue(Exit.isSuccess(yield* Fiber.await(second)), "stored as the committer closed, not left waiting")
      const [name] = yield* journalsIn(fs, directory)
      const journal = Journal.parse(yield* fs.readFile(join(directory, name!)))!
      assert.deepStrictEqual(journal.records.map((r) => r.offset), [chunk(0).offset, chunk(1).offset], "kept: it covers the session file")
      const late = yield* Effect.flip(committer.commit(chunk(2)))
      assert.include(late._tag === "StorageFailure" ? late.detail : "", "closed")
    }).pipe(Effect.scoped, Effect.provide(NodeServices.layer)))

  it.effect("a batch whose journal write fails through the committer fails, is cut, and the committer goes on", () =>
    Effect.gen(function*() {
      const full = diskFullOnce()
      const h = yield* harness(full.blocking)
      full.next()
      assert.strictEqual((yield* Effect.flip(h.committer.commit(h.chunk(0))))._tag, "PlatformError")
      yield* h.committer.commit(h.chunk(1))
      const journal = yield* h.journal
      assert.isUndefined(journal.stoppedAt)
      assert.deepStrictEqual(journal.records.map((r) => r.offset), [h.chunk(1).offset])
    }).pipe(Effect.scoped, Effect.provide(NodeServices.layer)))

  it.effect("a journal still covering a session file that couldn't be synced is kept when the log closes, for recovery to replay", () =>
    Effect.gen(function*() {
      const real = yield* FileSystem.FileSystem
      const directory = yield* real.makeTempDirectoryScoped({ prefix: "todo-write-committer-" })
      let syncFails = false
      // Session files' syncs through FileSystem (a writer's release on close) fail once `syncFails` is set.
      const fs = failing(real, { sync: (p) => syncFails && p.endsWith(".jsonl") ? systemError("EIO", "sync", p) : undefined })
      const session = SessionId.decodeSync("unsynced")
      yield* Effect.scoped(Effect.gen(function*() {
        const log = yield* Layer.build(SessionLogFile.layerFileSystem({ directory, journal: true }).pipe(
          Layer.provide(Layer.merge(NodeServices.layer, Layer.succeed(FileSystem.FileSystem, fs)))
        )).pipe(Effect.map(Context.get(SessionLog.SessionLog)))
        for (let i = 0; i < 3; i++) yield* log.append(session, "t", { i })
        syncFails = true
      }))
      assert.strictEqual((yield* journalsIn(real, directory)).length, 1, "the journal holds what the session file may not")
    }).pipe(Effect.scoped, Effect.provide(NodeServices.layer)))

  it.effect("a retired journal's session files are synced one at a time, leaving the thread pool to the next journal's fsync; a released one is skipped", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const directory = yield* fs.makeTempDirectoryScoped({ prefix: "todo-write-committer-" })
      const journal = yield* JournalFile.open(fs, yield* Path.Path, directory, yield* Owner.self(fs), yield* Effect.scope, 0)
      let inFlight = 0
      let most = 0
      const synced: Array<number> = []
      const files: Array<FileSystem.File> = []
      for (let i = 0; i < 6; i++) {
        const real = yield* fs.open(join(directory, `s${i}.jsonl`), { flag: "a+" })
        // A sync that takes a few turns of the scheduler: others started meanwhile would overlap it.
        // While the first is synced, the writer of the fourth closes: it releases its file.
        const sync = Effect.gen(function*() {
          most = Math.max(most, ++inFlight)
          if (i === 0) journal.dirty.delete(files[3]!)
          for (let turn = 0; turn < 3; turn++) yield* Effect.yieldNow
          yield* real.sync
          inFlight--
          synced.push(i)
        })
        // A released file may be closed: a sync of it fails.
        files.push(Object.create(real, { sync: { get: () => i === 3 ? Effect.fail(systemError("EBADF", "sync", i)) : sync } }))
        journal.dirty.add(files[i]!)
      }
      let removed = false
      yield* JournalFile.retire(fs, directory, journal, () => (removed = true), (f) => f.sync)
      assert.deepStrictEqual(synced, [0, 1, 2, 4, 5], "the released file is not synced again")
      assert.strictEqual(most, 1, "never two session files' syncs at once")
      assert.isTrue(removed)
      assert.isFalse(yield* fs.exists(journal.path))
    }).pipe(Effect.scoped, Effect.provide(NodeServices.layer)))

  it.live("a next journal that can't be opened postpones the checkpoint, with a warning; batches go on in the current one", () =>
    Effect.gen(function*() {
      const real = yield* FileSystem.FileSystem
      const directory = yield* real.makeTempDirectoryScoped({ prefix: "todo-write-committer-" })
      let opened = 0
      // The first journal opens; every later one finds no descriptor left.
      const fs = failing(real, {
        open: (p) => p.endsWith(Journal.extension) && ++opened > 1 ? systemError("EMFILE", "open", p) : undefined
      })
      const warnings: Array<string> = []
      const capture = Logger.make(({ logLevel, message }) => {
        if (logLevel === "Warn") warnings.push(Array.isArray(message) ? message.join(" ") : String(message))
      })
      const committer = yield* JournalCommitter.make(fs, yield* Path.Path, directory, yield* Effect.scope, yield* Owner.self(real), {
        checkpointBytes: 1024,
        io: BlockingIo.inPlace(BlockingIo.node, BlockingIo.fromFileSystem(real))
      }).pipe(Effect.provide(Logger.layer([capture])))
      const session = yield* real.open(join(directory, "s.jsonl"), { flag: "a+" })
      const line = Format.encodeLines(Format.entryLine("t", 0, 0, JSON.stringify("x".repeat(300))))
      let committed = 0
      for (; committed < 40 && (warnings.length === 0 || committed < 10); committed++) {
        while (!committer.idle()) yield* Effect.sleep("1 millis")
        const chunk = { session: "s", file: session, offset: committed * line.length, bytes: line }
        assert.isUndefined(committer.commitBlocking(chunk, BlockingIo.node))
        yield* Effect.sleep("1 millis")
      }
      assert.match(warnings[0] ?? "", /^SessionLogFile: no new journal, checkpoint postponed: /)
      const [name, ...others] = yield* journalsIn(real, directory)
      assert.deepStrictEqual(others, [], "still the one journal")
      const journal = Journal.parse(yield* real.readFile(join(directory, name!)))!
      assert.strictEqual(journal.records.length, committed, "every batch, past the checkpoint size, in the current journal")
    }).pipe(Effect.scoped, Effect.provide(NodeServices.layer)))

  it.live("zeros that can't be written ahead leave a warning; batches go on past the zeros' end, growing the journal", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const directory = yield* fs.makeTempDirectoryScoped({ prefix: "todo-write-committer-" })
      // A write of nothing but zeros (never a record) finds the disk full.
      const blocking: BlockingIo.Blocking = {
        ...BlockingIo.node,
        writeAt: (fd, p, bytes, position) =>
          bytes.length > 0 && bytes.every((byte) => byte === 0)
            ? systemError("ENOSPC", "writeAll", p)
            : BlockingIo.node.writeAt(fd, p, bytes, position)
      }
      const warnings: Array<string> = []
      const capture = Logger.make(({ logLevel, message }) => {
        if (logLevel === "Warn") warnings.push(Array.isArray(message) ? message.join(" ") : String(message))
      })
      const committer = yield* JournalCommitter.make(fs, yield* Path.Path, directory, yield* Effect.scope, yield* Owner.self(fs), {
        checkpointBytes: 4 * 1024 * 1024,
        io: BlockingIo.inPlace(blocking, BlockingIo.fromFileSystem(fs))
      }).pipe(Effect.provide(Logger.layer([capture])))
      const session = yield* fs.open(join(directory, "s.jsonl"), { flag: "a+" })
      // Batches of ~100 KiB: past the first zeros' end less the margin after two.
      const line = Format.encodeLines(Format.entryLine("t", 0, 0, JSON.stringify("x".repeat(100 * 1024))))
      for (let i = 0; i < 6; i++) {
        while (!committer.idle()) yield* Effect.sleep("1 millis")
        assert.isUndefined(committer.commitBlocking({ session: "s", file: session, offset: i * line.length, bytes: line }, blocking))
        yield* Effect.sleep("1 millis")
      }
      assert.match(warnings[0] ?? "", /^SessionLogFile: .*\.wal not written ahead: /)
      const [name] = yield* journalsIn(fs, directory)
      const bytes = yield* fs.readFile(join(directory, name!))
      const journal = Journal.parse(bytes)!
      assert.strictEqual(journal.records.length, 6, "every batch, the last ones past the zeros")
      assert.isAbove(bytes.length, JournalFile.firstAhead, "the journal grew past its first zeros")
    }).pipe(Effect.scoped, Effect.provide(NodeServices.layer)))

  it.effect("a committer's failed write that can't be cut breaks the journal: every later batch is refused, saying so", () =>
    Effect.gen(function*() {
      const { chunk, committer, state } = yield* breakingCommitter((state) =>
        journalFailing(() => state.broken ? systemError("EIO", "writeAll", "journal") : undefined)
      )
      yield* committer.commit(chunk(0))
      state.broken = true
      const failed = StorageFailures.toError("append")(yield* Effect.flip(committer.commit(chunk(1))))
      assert.deepInclude(failed.reason, { _tag: "StorageFailure", kind: "IoError", maybeStored: true })
      assert.include(failed.message, "could not be cut back: this batch may still be replayed after a crash")
      assert.isTrue(PlatformError.isPlatformError(failed.cause), "the foreign error stays the cause")
      state.broken = false
      const refused = yield* Effect.flip(committer.commit(chunk(1)))
      assert.include(refused._tag === "StorageFailure" ? refused.detail : "", "can't be repaired after a failed write")
    }).pipe(Effect.scoped, Effect.provide(NodeServices.layer)))

  it.effect("a committer's write that dies of a defect and can't be cut: the batch fails as maybe stored, not as the bare defect", () =>
    Effect.gen(function*() {
      const { chunk, committer, state } = yield* breakingCommitter((state) => ({
        ...BlockingIo.node,
        writeAt: (fd, p, bytes, position) => {
          // A bug below the log: the call throws rather than answering its error.
          if (state.broken && p.endsWith(Journal.extension)) throw new Error("the write's code threw")
          return BlockingIo.node.writeAt(fd, p, bytes, position)
        }
      }))
      yield* committer.commit(chunk(0))
      state.broken = true
      const failed = StorageFailures.toError("append")(yield* Effect.flip(committer.commit(chunk(1))))
      assert.deepInclude(failed.reason, { _tag: "StorageFailure", maybeStored: true })
      assert.include(failed.message, "the write's code threw")
      assert.include(failed.message, "could not be cut back: this batch may still be replayed after a crash")
    }).pipe(Effect.scoped, Effect.provide(NodeServices.layer)))
})

/**
 * A committer over a fresh directory whose journal can't be truncated once `state.broken`, its calls
 * made through `blocking` (which may look at `state` too); `chunk(n)`: the n-th line of a session file.
 */
const breakingCommitter = (blocking: (state: { broken: boolean }) => BlockingIo.Blocking) =>
  Effect.gen(function*() {
    const real = yield* FileSystem.FileSystem
    const directory = yield* real.makeTempDirectoryScoped({ prefix: "todo-write-committer-" })
    const state = { broken: false }
    const fs = failing(real, {
      truncate: (p) => state.broken && p.endsWith(Journal.extension) ? systemError("EIO", "truncate", p) : undefined
    })
    const committer = yield* JournalCommitter.make(fs, yield* Path.Path, directory, yield* Effect.scope, yield* Owner.self(real), {
      checkpointBytes: 4 * 1024 * 1024,
      io: BlockingIo.inPlace(blocking(state), BlockingIo.fromFileSystem(fs))
    })
    const session = yield* real.open(join(directory, "s.jsonl"), { flag: "a+" })
    const line = Format.encodeLines(Format.entryLine("t", 0, 0, "{}"))
    return { committer, state, chunk: (n: number) => ({ session: "s", file: session, offset: n * line.length, bytes: line }) }
  })

describe("JournalCommitter, through its I/O thread", () => {
  it.live("closing while rounds are posted one while another answers: no more are posted, and every batch is answered, stored or refused", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const directory = yield* fs.makeTempDirectoryScoped({ prefix: "todo-write-committer-" })
      const scope = yield* Scope.make()
      // Every round split: the next posted halfway through its answers, or at once if batches wait.
      let posts = 0
      const halves: JournalRound.Placement = (answering, waiting) =>
        waiting > 0 ? (posts++, 0) : answering > 1 ? (posts++, answering >> 1) : undefined
      const committer = yield* JournalCommitter.make(fs, yield* Path.Path, directory, scope, yield* Owner.self(fs), {
        checkpointBytes: 64 * 1024 * 1024,
        io: BlockingIo.inPlace(BlockingIo.node, BlockingIo.fromFileSystem(fs)),
        thread: true
      }).pipe(Effect.provideService(JournalRound.RoundPlacement, halves))
      const lock = join(directory, "s.lock")
      yield* fs.writeFileString(lock, "")
      const held = statSync(lock, { bigint: true })
      const line = Format.encodeLines(Format.entryLine("t", 0, 0, `{"n":0}`))
      // 32 sessions, each handing over one batch at a time, as writers do, until the committer refuses.
      const sessions = yield* Effect.forEach(Array.from({ length: 32 }, (_, i) => `s${i}`), (session) =>
        Effect.map(fs.open(join(directory, `${session}.jsonl`), { flag: "a+" }), (file) => ({ session, file })))
      let stored = 0
      const reached = yield* Deferred.make<void>()
      const appending = yield* Effect.forkChild(Effect.forEach(sessions, ({ file, session }) =>
        Effect.gen(function*() {
          const write: IoCalls.Write = {
            fd: BlockingIo.descriptorOf(file)!,
            path: join(directory, `${session}.jsonl`),
            directory,
            lock,
            lockDev: BigInt.asUintN(64, held.dev),
            lockIno: BigInt.asUintN(64, held.ino)
          }
          for (let n = 0;; n++) {
            const exit = yield* Effect.exit(committer.commitWriting!({ session, file, offset: n * line.length, bytes: line, write }))
            if (Exit.isFailure(exit)) return exit
            assert.strictEqual(exit.value._tag, "Durable")
            if (++stored === 2000) yield* Deferred.succeed(reached, undefined)
          }
        }), { concurrency: "unbounded" }))
      yield* Deferred.await(reached)
      const postsBeforeClose = posts
      const storedBeforeClose = stored
      yield* Scope.close(scope, Exit.void).pipe(Effect.timeout("10 seconds"))
      const refused = yield* Fiber.join(appending).pipe(Effect.timeout("10 seconds"))
      assert.isAbove(postsBeforeClose, 10, "rounds were posted early")
      // The round posted when the close began, and the batches its answers handed over: no chain of
      // rounds, each posting the next, until upkeep happened to be due.
      assert.isAtMost(stored - storedBeforeClose, 3 * sessions.length, "the close stopped the rounds posted early")
      for (const exit of refused) {
        const failure = Exit.isFailure(exit) ? Option.getOrUndefined(Exit.findErrorOption(exit)) : undefined
        assert.include(failure?._tag === "StorageFailure" ? failure.detail : String(exit), "closed", "refused, saying the journal closed")
      }
    }).pipe(Effect.scoped, Effect.provide(NodeServices.layer)), 30_000)
})
