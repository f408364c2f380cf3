/**
 * Which journals cover which session files, when a sync of one fails. Linux reports a failed
 * write-back of a file's dirty pages ONCE per open file description, to the next fsync/fdatasync made
 * through it (errseq); a later sync returns success although the data never reached the disk. These
 * tests model that with a fake whose sync reports an armed error once, and check that a session file
 * whose sync reported such an error is never trusted afterwards for acknowledged appends written before
 * that sync: their journal stays, for recovery. (Found by a second reader; each test failed before.)
 */
import { NodeServices } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, FileSystem, Layer, Logger, Path, Scope } from "effect"
import { basename, join } from "node:path"
import * as BlockingIo from "../../../src/log/file/BlockingIo.ts"
import * as Format from "../../../src/log/file/Format.ts"
import * as Journal from "../../../src/log/file/Journal.ts"
import * as JournalCommitter from "../../../src/log/file/JournalCommitter.ts"
import * as Owner from "../../../src/log/file/Owner.ts"
import * as SessionLogFile from "../../../src/log/file/SessionLogFile.ts"
import * as SessionId from "../../../src/log/SessionId.ts"
import * as Writers from "../../../src/log/file/Writers.ts"
import * as SessionLog from "../../../src/log/SessionLog.ts"
import { fileOf, openRaw, overriding, session, systemError, withDirectory } from "./FileTest.ts"

const journalsIn = (fs: FileSystem.FileSystem, directory: string) =>
  Effect.map(fs.readDirectory(directory), (names) => names.filter((name) => name.endsWith(Journal.extension)).sort())

/**
 * A committer over a fresh directory, a new journal every KiB, living until `scope` is closed; it
 * syncs the journal through the thread pool, or with `sync`.
 */
const rotatingCommitter = (sync?: BlockingIo.Io["sync"]) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const directory = yield* fs.makeTempDirectoryScoped({ prefix: "todo-write-coverage-" })
    const scope = yield* Scope.make()
    const pooled = BlockingIo.fromFileSystem(fs)
    const committer = yield* JournalCommitter.make(fs, yield* Path.Path, directory, scope, yield* Owner.self(fs), {
      checkpointBytes: 1024,
      io: { ...BlockingIo.inPlace(BlockingIo.node, pooled), sync: sync ?? pooled.sync }
    }).pipe(Effect.provide(Logger.layer([])))
    return { fs, directory, scope, committer }
  })

/**
 * The session file `f.jsonl` in `directory` (open in `scope`, if given), whose first sync says so
 * (`syncing`), waits for `gate`, then reports a write-back error, or syncs (`fails: false`); later
 * syncs succeed at once, as Linux's do.
 */
const firstSyncGated = (directory: string, options: { readonly fails: boolean; readonly scope?: Scope.Scope }) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const opening = fs.open(join(directory, "f.jsonl"), { flag: "a+" })
    const real = yield* (options.scope === undefined ? opening : Scope.provide(opening, options.scope))
    const syncing = yield* Deferred.make<void>()
    const gate = yield* Deferred.make<void>()
    let syncs = 0
    const synced = options.fails ? Effect.fail(systemError("EIO", "sync", "f.jsonl")) : real.sync
    const file: FileSystem.File = Object.create(real, {
      sync: {
        get: () =>
          Effect.suspend(() =>
            ++syncs === 1 ? Effect.andThen(Effect.andThen(Deferred.succeed(syncing, undefined), Deferred.await(gate)), synced) : real.sync
          )
      }
    })
    return { real, file, syncing, gate, syncs: () => syncs }
  })

/**
 * Lone batches of another session, each filling a journal of `rotatingCommitter`, from `from` on, till
 * `enough` (or 40 journals): each journal they fill retires, syncing the session files it covers.
 */
const fillJournals = (committer: JournalCommitter.Committer, other: FileSystem.File, from: number, enough: () => boolean) =>
  Effect.gen(function*() {
    for (let i = from; i < 40 && !enough(); i++) {
      while (!committer.idle()) yield* Effect.sleep("1 millis")
      assert.isUndefined(committer.commitBlocking({ session: "other", file: other, offset: i * big.length, bytes: big }, BlockingIo.node))
      yield* Effect.sleep("5 millis")
    }
  })

/** A line big enough to fill a journal of `rotatingCommitter` alone. */
const big = Format.encodeLines(Format.entryLine("t", 0, 0, JSON.stringify("x".repeat(1100))))

/**
 * The real file system, but a write-back failure can be armed for a path: the next sync of a file
 * opened at that path (through any descriptor) reports EIO, once; the syncs after it succeed, as
 * Linux's do.
 */
const errseq = (real: FileSystem.FileSystem) => {
  const armed = new Set<string>()
  const reported: Array<string> = []
  const fs = overriding(real, (path, file) => ({
    sync: {
      get: () =>
        Effect.suspend(() => {
          if (!armed.delete(path)) return file.sync
          reported.push(path)
          return Effect.fail(systemError("EIO", "sync", path))
        })
    }
  }))
  return { fs, reported, arm: (path: string) => armed.add(path) }
}

describe("Coverage: write-back errors reported once (errseq)", () => {
  it.effect(
    "journal mode: when the cut of a failed batch takes the session file's write-back error, the journal holding an earlier acknowledged append stays, though later syncs of the file succeed",
    () =>
      withDirectory((directory) =>
        Effect.gen(function*() {
          const real = yield* FileSystem.FileSystem
          const wb = errseq(real)
          const sessionFile = fileOf(directory)
          let journalPath = ""
          const second = yield* openRaw(directory, (log) =>
            Effect.gen(function*() {
              // Acknowledged: durable in the journal; its line is in the session file's page cache only.
              yield* log.append(session, "t", { n: 0 })
              ;journalPath = join(directory, (yield* journalsIn(real, directory))[0]!)
              // The disk fails: the write-back of the session file's dirty pages (the acknowledged
              // line) fails, and so does the journal's next sync.
              wb.arm(sessionFile)
              wb.arm(journalPath)
              return yield* Effect.exit(log.append(session, "t", { n: 1 }))
            }), { journal: true }, wb.fs)
          assert.isTrue(Exit.isFailure(second), "the second append failed")
          assert.deepStrictEqual(
            wb.reported.slice().sort(),
            [journalPath, sessionFile].sort(),
            "the session file's write-back error was reported, once, to the cut of the failed batch"
          )
          // The acknowledged append's line never reached the disk: only the journal holds it.
          assert.include(
            yield* journalsIn(real, directory),
            journalPath.slice(directory.length + 1),
            "the journal holding the acknowledged append stays, for recovery to replay"
          )
        })
      )
  )

  it.live(
    "journal mode: when a retiring journal's sync of a session file fails, the journal that a batch of that file then in flight is stored in stays too, though later syncs of the file succeed",
    () =>
      Effect.gen(function*() {
        // The committer's syncs of the journal wait at `journalGate` while it is armed.
        let journalGate: Deferred.Deferred<void> | undefined
        const journalSyncing = yield* Deferred.make<void>()
        const pooled = BlockingIo.fromFileSystem(yield* FileSystem.FileSystem)
        const { fs, directory, scope, committer } = yield* rotatingCommitter((file, p) =>
          journalGate === undefined
            ? pooled.sync(file, p)
            : Effect.andThen(Effect.andThen(Deferred.succeed(journalSyncing, undefined), Deferred.await(journalGate)), pooled.sync(file, p)))
        // f's first sync (the retiring journal's) reports a write-back error: the pages it found dirty
        // include the batch in flight.
        const { real: realF, file: f, syncing: fSyncing, gate: fGate, syncs: fSyncs } = yield* firstSyncGated(directory, { fails: true })
        const other = yield* fs.open(join(directory, "other.jsonl"), { flag: "a+" })
        const small = Format.encodeLines(Format.entryLine("t", 1, 0, JSON.stringify("in flight")))
        // B0 of f fills the first journal: a checkpoint rotates it, and its retirement syncs f.
        yield* realF.writeAll(big)
        assert.isUndefined(committer.commitBlocking({ session: "f", file: f, offset: 0, bytes: big }, BlockingIo.node))
        const [first] = yield* journalsIn(fs, directory)
        yield* Deferred.await(fSyncing)
        const [second] = (yield* journalsIn(fs, directory)).filter((name) => name !== first)
        assert.isDefined(second, "the next journal is current")
        // B1 of f: written to f, then handed to the committer; its journal sync waits.
        journalGate = yield* Deferred.make<void>()
        yield* realF.writeAll(small)
        const b1 = yield* Effect.forkChild(committer.commit({ session: "f", file: f, offset: big.length, bytes: small }))
        yield* Deferred.await(journalSyncing)
        // The retiring journal's sync of f reports the write-back error (of B1's page, say).
        yield* Deferred.succeed(fGate, undefined)
        yield* Effect.sleep("20 millis")
        // B1 is durable in the second journal: acknowledged.
        yield* Deferred.succeed(journalGate, undefined)
        journalGate = undefined
        yield* Fiber.join(b1)
        // Another session fills the second journal: it retires, syncing f again (that sync succeeds).
        yield* fillJournals(committer, other, 0, () => fSyncs() >= 2)
        yield* Effect.sleep("100 millis")
        const left = yield* journalsIn(fs, directory)
        yield* Scope.close(scope, Exit.void)
        assert.include(left, first!, "the first journal stays (its sync of f failed)")
        assert.include(left, second!, "the journal holding B1, written to f before f's failed sync, stays too")
      }).pipe(Effect.scoped, Effect.provide(NodeServices.layer))
  )

  it.live("journal mode: the same when a lone batch's cut, a blocking call, takes the session file's report", () =>
    withDirectory((directory) =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        // Node's blocking calls, but the next sync of an armed path reports EIO, once.
        const armed = new Set<string>()
        const reported: Array<string> = []
        const once = (path: string) => armed.delete(path) ? (reported.push(path), systemError("EIO", "sync", path)) : undefined
        const blocking: BlockingIo.Blocking = {
          ...BlockingIo.node,
          sync: (fd, path) => once(path) ?? BlockingIo.node.sync(fd, path),
          datasync: (fd, path) => once(path) ?? BlockingIo.node.datasync(fd, path)
        }
        const sessionFile = fileOf(directory)
        let journalPath = ""
        const second = yield* Effect.gen(function*() {
          const log = yield* SessionLog.SessionLog
          yield* log.append(session, "t", { n: 0 })
          journalPath = join(directory, (yield* journalsIn(fs, directory))[0]!)
          armed.add(sessionFile).add(journalPath)
          // Alone: no append within the contention window, so stored with the blocking calls.
          yield* Effect.sleep(`${Writers.contentionWindowMs + 10} millis`)
          return yield* Effect.exit(log.append(session, "t", { n: 1 }))
        }).pipe(Effect.provide(SessionLogFile.layerFileSystem({ directory, journal: true }).pipe(
          Layer.provide(Layer.mergeAll(NodeServices.layer, Layer.succeed(BlockingIo.BlockingIo, blocking)))
        )))
        assert.isTrue(Exit.isFailure(second), "the second append failed")
        assert.sameMembers(reported, [journalPath, sessionFile], "its cut's blocking sync took the session file's report")
        assert.include(yield* journalsIn(fs, directory), basename(journalPath), "the journal holding the acknowledged append stays")
      })))

  it.live("journal mode: a cut's sync of a session file and a retiring journal's sync of it run one at a time, so the report one takes is known before the journal goes", () =>
    Effect.gen(function*() {
      const { fs, directory, scope, committer } = yield* rotatingCommitter()
      // f's first sync (a failed batch's cut) takes the write-back error.
      const { real: realF, file: f, syncing: cutSyncing, gate } = yield* firstSyncGated(directory, { fails: true })
      const other = yield* fs.open(join(directory, "other.jsonl"), { flag: "a+" })
      const small = Format.encodeLines(Format.entryLine("t", 0, 0, JSON.stringify("acknowledged")))
      // B0 of f, acknowledged: durable in the first journal, which covers f.
      yield* realF.writeAll(small)
      assert.isUndefined(committer.commitBlocking({ session: "f", file: f, offset: 0, bytes: small }, BlockingIo.node))
      const [first] = yield* journalsIn(fs, directory)
      // B1 of f failed: its cut syncs f, and takes the report (of B0's lost write-back, say).
      const cut = yield* Effect.forkChild(Effect.exit(committer.sync(f)))
      yield* Deferred.await(cutSyncing)
      // Another session fills the first journal: it retires, syncing f.
      assert.isUndefined(committer.commitBlocking({ session: "other", file: other, offset: 0, bytes: big }, BlockingIo.node))
      yield* Effect.sleep("100 millis")
      yield* Deferred.succeed(gate, undefined)
      assert.isTrue(Exit.isFailure(yield* Fiber.join(cut)), "the cut's sync failed")
      yield* Effect.sleep("100 millis")
      const left = yield* journalsIn(fs, directory)
      yield* Scope.close(scope, Exit.void)
      assert.include(left, first!, "the journal covering f stays")
    }).pipe(Effect.scoped, Effect.provide(NodeServices.layer)))

  it.live("journal mode: a retiring journal never syncs a session file whose writer released it (and closed it) while the retire waited its turn", () =>
    Effect.gen(function*() {
      const { fs, directory, scope, committer } = yield* rotatingCommitter()
      // f: a writer's session file, in a scope of its own (the writer's), closed right after release;
      // its first sync, the closing writer's, waits at `gate`.
      const fScope = yield* Scope.make()
      const { real: realF, file: f, syncing: releaseSyncing, gate, syncs } = yield* firstSyncGated(directory, { fails: false, scope: fScope })
      let syncsAtRelease = 0
      const other = yield* fs.open(join(directory, "other.jsonl"), { flag: "a+" })
      const small = Format.encodeLines(Format.entryLine("t", 0, 0, JSON.stringify("acknowledged")))
      yield* realF.writeAll(small)
      assert.isUndefined(committer.commitBlocking({ session: "f", file: f, offset: 0, bytes: small }, BlockingIo.node))
      const [first] = yield* journalsIn(fs, directory)
      // f's writer closes (as Writers does): release, then the file closes.
      const closing = yield* Effect.forkChild(Effect.andThen(
        Effect.andThen(committer.release(f), Effect.sync(() => void (syncsAtRelease = syncs()))),
        Scope.close(fScope, Exit.void)
      ))
      yield* Deferred.await(releaseSyncing)
      // Another session fills the journal: it retires, and reaches f while release holds the permit.
      assert.isUndefined(committer.commitBlocking({ session: "other", file: other, offset: 0, bytes: big }, BlockingIo.node))
      yield* Effect.sleep("50 millis")
      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.join(closing)
      yield* Effect.sleep("200 millis")
      const left = yield* journalsIn(fs, directory)
      yield* Scope.close(scope, Exit.void)
      assert.strictEqual(syncs(), syncsAtRelease, "no sync of f once its writer released it (its file closes next)")
      assert.notInclude(left, first!, "the first journal retired: every file it covers was synced")
    }).pipe(Effect.scoped, Effect.provide(NodeServices.layer)))

  it.live("journal mode: a batch written to a session file before a failed sync of it, but handed over after the failure is recorded (a writer writes, then hands over), leaves its journal kept", () =>
    Effect.gen(function*() {
      const { fs, directory, scope, committer } = yield* rotatingCommitter()
      // f's first sync (the retiring journal's) reports a write-back error (of B1's page, written meanwhile).
      const { real: realF, file: f, syncing: fSyncing, gate, syncs: fSyncs } = yield* firstSyncGated(directory, { fails: true })
      const other = yield* fs.open(join(directory, "other.jsonl"), { flag: "a+" })
      const small = Format.encodeLines(Format.entryLine("t", 0, 0, JSON.stringify("B0")))
      const b1 = Format.encodeLines(Format.entryLine("t", 1, 0, JSON.stringify("B1")))
      // B0 of f in the first journal, which fills and retires, syncing f.
      yield* realF.writeAll(small)
      assert.isUndefined(committer.commitBlocking({ session: "f", file: f, offset: 0, bytes: small }, BlockingIo.node))
      const [first] = yield* journalsIn(fs, directory)
      assert.isUndefined(committer.commitBlocking({ session: "other", file: other, offset: 0, bytes: big }, BlockingIo.node))
      yield* Deferred.await(fSyncing)
      // B1 of f is written to f (as Writer.append / appendShared do, before handing it over)...
      yield* realF.writeAll(b1)
      // ...the retire's sync of f reports the write-back error (B1's page) and is recorded...
      yield* Deferred.succeed(gate, undefined)
      yield* Effect.sleep("20 millis")
      const left0 = yield* journalsIn(fs, directory)
      assert.strictEqual(left0.length, 2, "the first journal stays; the second is current")
      const second = left0.find((name) => name !== first)!
      // ...then B1 is handed over (its write's completion ran after the sync's): acknowledged.
      yield* committer.commit({ session: "f", file: f, offset: small.length, bytes: b1 })
      // Another session fills the journal holding B1: it retires, its sync of f succeeds.
      yield* fillJournals(committer, other, 1, () => fSyncs() >= 2)
      yield* Effect.sleep("100 millis")
      const left = yield* journalsIn(fs, directory)
      yield* Scope.close(scope, Exit.void)
      assert.isTrue(left.some((name) => name !== first && name !== second), "the journal holding B1 was checkpointed: another is current")
      assert.include(left, first!, "the first journal stays (its sync of f failed)")
      assert.include(left, second, "the journal holding B1 (written to f before f's failed sync) stays too")
    }).pipe(Effect.scoped, Effect.provide(NodeServices.layer)))

  it.live("journal mode: a checkpoint's sync of a session file under way as the log closes runs to its answer: the journal holding an acknowledged append stays when it fails", () =>
    withDirectory((directory) =>
      Effect.gen(function*() {
        const real = yield* FileSystem.FileSystem
        const sessionFile = fileOf(directory)
        const other = SessionId.decodeSync("other-session")
        let armed = false
        const syncing = yield* Deferred.make<void>()
        const syncs: Array<string> = []
        const fs = overriding(real, (path, file) =>
          path !== sessionFile ? undefined : {
            sync: {
              get: () =>
                Effect.suspend(() => {
                  if (!armed) {
                    syncs.push("ok")
                    return file.sync
                  }
                  // The kernel's fsync takes the write-back error now (errseq), and answers
                  // once the disk gives up, 300 ms later, whether anyone still waits or not.
                  armed = false
                  syncs.push("EIO")
                  return Effect.andThen(
                    Effect.andThen(Deferred.succeed(syncing, undefined), Effect.sleep("300 millis")),
                    Effect.fail(systemError("EIO", "sync", sessionFile))
                  )
                })
            }
          })
        let first = ""
        yield* openRaw(directory, (log) =>
          Effect.gen(function*() {
            // Acknowledged: durable in the first journal, in the session file's page cache only.
            yield* log.append(session, "t", { n: 0 })
            first = (yield* journalsIn(real, directory))[0]!
            // The disk fails that page's write-back: the next sync of the file reports it.
            armed = true
            // Another session fills the journal: a checkpoint retires it, syncing the session file.
            yield* log.append(other, "t", { x: "x".repeat(2000) })
            yield* Deferred.await(syncing)
            // The log closes while that sync is under way.
          }), { journal: { checkpointBytes: 1024 } }, fs)
        yield* Effect.sleep("500 millis")
        const left = yield* journalsIn(real, directory)
        assert.include(syncs, "EIO", "the retire synced the file")
        assert.include(left, first, `the journal holding the acknowledged append stays (syncs of the file: ${syncs.join(", ")})`)
      })))
})
