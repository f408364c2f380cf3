import { assert, describe, it } from "@effect/vitest"
import { NodeServices } from "@effect/platform-node"
import { Effect, FileSystem, Layer, PlatformError, Result, Stream } from "effect"
import { TestClock } from "effect/testing"
import * as BlockingIo from "../../../src/log/file/BlockingIo.ts"
import * as Journal from "../../../src/log/file/Journal.ts"
import * as SessionFile from "../../../src/log/file/Format.ts"
import * as SessionLogFile from "../../../src/log/file/SessionLogFile.ts"
import * as Writers from "../../../src/log/file/Writers.ts"
import * as SessionId from "../../../src/log/SessionId.ts"
import * as SessionLog from "../../../src/log/SessionLog.ts"
import * as TodoEvents from "../../../src/todo/TodoEvents.ts"
import { failureOf } from "../SessionLogConformance.ts"
import { failing, fileOf, hasProcFds, layer, openRaw, session, systemError, todo, withDirectory } from "./FileTest.ts"

/**
 * Each append comes after a pause longer than the contention window, so every batch counts as alone
 * and takes the blocking path (the test clock never moves otherwise, so after a writer's first batch
 * its batches count as contended and go through `Io`).
 */
const alone = (log: SessionLog.Service): SessionLog.Service => ({
  ...log,
  append: (s, type, data) => Effect.andThen(TestClock.adjust(Writers.contentionWindowMs), log.append(s, type, data))
})

/** A log over `directory` that stays open for the rest of the test; every batch alone if `lone`. */
const opened = (directory: string, options: { readonly journal?: boolean }, lone = false) =>
  Effect.map(
    Layer.build(layer(directory, options)),
    (context) => Effect.map(SessionLog.SessionLog.pipe(Effect.provide(context)), (log) => lone ? alone(log) : log)
  )

for (
  const mode of [
    { name: "fsync mode", options: {}, lone: false },
    { name: "journal mode", options: { journal: true }, lone: false },
    { name: "fsync mode, lone batches", options: {}, lone: true },
    { name: "journal mode, lone batches", options: { journal: true }, lone: true }
  ]
) {
  describe(`Writer (${mode.name}): a writer stops acknowledging once its files are not its own`, () => {
    it.effect("the lock deleted by hand: a second writer takes over, and the first fails instead of interleaving", () =>
      withDirectory((directory) =>
        Effect.gen(function*() {
          const fs = yield* FileSystem.FileSystem
          const lockPath = `${directory}/${SessionFile.lockName(session)}`
          const first = yield* yield* opened(directory, mode.options, mode.lone)
          assert.strictEqual((yield* first.append(session, "todo/write", todo("one"))).seq, 0)
          yield* fs.remove(lockPath)
          const second = yield* yield* opened(directory, mode.options, mode.lone)
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
          const log = yield* yield* opened(directory, mode.options, mode.lone)
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
          const log = yield* yield* opened(directory, mode.options, mode.lone)
          yield* log.append(session, "todo/write", todo("one"))
          yield* fs.remove(fileOf(directory))
          const error = failureOf(yield* Effect.exit(log.append(session, "todo/write", todo("two"))))
          assert.deepInclude(error.reason, { _tag: "OwnershipLost", path: fileOf(directory) })
          assert.include(error.message, "deleted")
        })
      ))

    it.effect("the session file appended to by someone else: the next append fails, unacknowledged, saying where the file ends", () =>
      withDirectory((directory) =>
        Effect.gen(function*() {
          const fs = yield* FileSystem.FileSystem
          const log = yield* yield* opened(directory, mode.options, mode.lone)
          yield* log.append(session, "todo/write", todo("one"))
          yield* fs.writeFileString(fileOf(directory), "someone else's line\n", { flag: "a" })
          const error = failureOf(yield* Effect.exit(log.append(session, "todo/write", todo("two"))))
          assert.deepInclude(error.reason, { _tag: "OwnershipLost", path: fileOf(directory) })
          assert.include(error.message, "another process appended to it")
          assert.strictEqual(failureOf(yield* Effect.exit(log.append(session, "n", {}))).reason._tag, "OwnershipLost", "and it stops")
        })
      ))

    it.effect("the session file replaced under a running writer: the next append fails", () =>
      withDirectory((directory) =>
        Effect.gen(function*() {
          const fs = yield* FileSystem.FileSystem
          const log = yield* yield* opened(directory, mode.options, mode.lone)
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

/**
 * Node's blocking calls, except that `fail` may answer an error for a call instead of making it in
 * full: a positioned write is a "write", an fdatasync a "sync"; a failed "lstat" makes none.
 */
const failingBlocking = (
  fail: (call: "write" | "sync" | "truncate" | "lstat", path: string) => PlatformError.PlatformError | undefined
): BlockingIo.Blocking => ({
  write: (fd, path, bytes) => {
    const error = fail("write", path)
    if (error === undefined) return BlockingIo.node.write(fd, path, bytes)
    // Half the batch reaches the file before the failure: what a full disk mid-write leaves.
    BlockingIo.node.write(fd, path, bytes.subarray(0, bytes.length >> 1))
    return error
  },
  writeAt: (fd, path, bytes, position) => {
    const error = fail("write", path)
    if (error === undefined) return BlockingIo.node.writeAt(fd, path, bytes, position)
    BlockingIo.node.writeAt(fd, path, bytes.subarray(0, bytes.length >> 1), position)
    return error
  },
  sync: (fd, path) => fail("sync", path) ?? BlockingIo.node.sync(fd, path),
  datasync: (fd, path) => fail("sync", path) ?? BlockingIo.node.datasync(fd, path),
  truncate: (fd, path, length) => fail("truncate", path) ?? BlockingIo.node.truncate(fd, path, length),
  lstat: (path) => {
    const error = fail("lstat", path)
    return error === undefined ? BlockingIo.node.lstat(path) : Result.fail(error)
  },
  stillAt: BlockingIo.node.stillAt
})

/**
 * After a first append, with the calls `breaking` turns on (the batch's failing with EIO, the cut's
 * with EROFS): the second fails as the storage failure it was, saying the batch, which can't be cut
 * (and why), may appear; the writer then stops.
 */
const failsUncut = (log: SessionLog.Service, directory: string, breaking: (on: boolean) => void) =>
  Effect.gen(function*() {
    yield* log.append(session, "todo/write", todo("one"))
    breaking(true)
    const failed = failureOf(yield* Effect.exit(log.append(session, "todo/write", todo("two"))))
    assert.deepInclude(failed.reason, { _tag: "StorageFailure", kind: "IoError", maybeStored: true })
    assert.include(failed.message, "EIO")
    assert.include(failed.message, `the failed batch could not be removed from ${fileOf(directory)} (the file system is read-only (EROFS, `)
    assert.include(failed.message, "so some or all of it may appear")
    assert.isTrue(PlatformError.isPlatformError(failed.cause), "the foreign error stays the cause")
    breaking(false)
    const error = failureOf(yield* Effect.exit(log.append(session, "todo/write", todo("three"))))
    assert.deepInclude(error.reason, { _tag: "OwnershipLost", path: fileOf(directory) })
    assert.include(error.message, "a failed write could not be cut from the file")
  })

/** A log over `directory` whose lone batches make `blocking`'s calls, every batch alone. */
const openedBlocking = (directory: string, options: { readonly journal?: boolean }, blocking: BlockingIo.Blocking) =>
  Effect.map(
    Layer.build(
      SessionLogFile.layerFileSystem({ ...options, directory }).pipe(
        Layer.provide(Layer.merge(NodeServices.layer, Layer.succeed(BlockingIo.BlockingIo, blocking)))
      )
    ),
    (context) => Effect.map(SessionLog.SessionLog.pipe(Effect.provide(context)), alone)
  )

describe("Writer: the checks of a lone batch", () => {
  /** Node's blocking calls, with the paths `lstat` was asked about. */
  const recordingStats = () => {
    const stats: Array<string> = []
    const blocking: BlockingIo.Blocking = { ...BlockingIo.node, lstat: (path) => (stats.push(path), BlockingIo.node.lstat(path)) }
    return { stats, blocking }
  }

  it.effect("in both modes, the session file is checked after the write without a stat", () =>
    withDirectory((directory) =>
      Effect.gen(function*() {
        for (const journal of [true, false]) {
          const { blocking, stats } = recordingStats()
          const id = journal ? "journaled" : "synced"
          yield* Effect.scoped(Effect.gen(function*() {
            const log = yield* yield* openedBlocking(`${directory}/${id}`, { journal }, blocking)
            yield* log.append(session, "todo/write", todo("one"))
            stats.length = 0
            yield* log.append(session, "todo/write", todo("two"))
            yield* log.append(session, "todo/write", todo("three"))
          }))
          const lockPath = `${directory}/${id}/${SessionFile.lockName(session)}`
          const sessionPath = fileOf(`${directory}/${id}`)
          assert.deepStrictEqual(
            stats,
            hasProcFds ? [lockPath, lockPath] : [lockPath, sessionPath, lockPath, sessionPath],
            "a stat would dirty the file's inode at its next write (without /proc, lstat decides)"
          )
        }
      })
    ))

  it.effect("when the stat-free check can't tell, lstat decides: an undisturbed file goes on appending", () =>
    withDirectory((directory) =>
      Effect.gen(function*() {
        const { blocking, stats } = recordingStats()
        const log = yield* yield* openedBlocking(directory, { journal: true }, { ...blocking, stillAt: () => false })
        yield* log.append(session, "todo/write", todo("one"))
        stats.length = 0
        assert.strictEqual((yield* log.append(session, "todo/write", todo("two"))).seq, 1)
        assert.include(stats, fileOf(directory))
        const verified = yield* SessionLogFile.verify({ directory }, session, TodoEvents.invariants)
        assert.deepInclude(verified, { events: 2, tornTailBytes: 0 })
      })
    ))
})

for (const mode of [{ name: "fsync mode", options: {} }, { name: "journal mode", options: { journal: true } }]) {
  describe(`Writer (${mode.name}): a lone batch's blocking calls that fail`, () => {
    const failure = (code: string, syscall: string, path: string) =>
      PlatformError.systemError({
        _tag: "Unknown",
        module: "FileSystem",
        method: syscall,
        pathOrDescriptor: path,
        syscall,
        cause: Object.assign(new Error(`${code}: failed, ${syscall}`), { code })
      })

    it.effect("a write cut short by a full disk fails the append as DiskFull; its half is cut, and the next append follows", () =>
      withDirectory((directory) =>
        Effect.gen(function*() {
          let full = false
          const blocking = failingBlocking((call, path) =>
            full && call === "write" && path === fileOf(directory) ? failure("ENOSPC", "write", path) : undefined
          )
          const log = yield* yield* openedBlocking(directory, mode.options, blocking)
          yield* log.append(session, "todo/write", todo("one"))
          full = true
          const error = failureOf(yield* Effect.exit(log.append(session, "todo/write", todo("two"))))
          assert.deepInclude(error.reason, { _tag: "StorageFailure", kind: "DiskFull" })
          assert.include(error.message, fileOf(directory))
          full = false
          assert.strictEqual((yield* log.append(session, "todo/write", todo("three"))).seq, 1)
          const verified = yield* SessionLogFile.verify({ directory }, session, TodoEvents.invariants)
          assert.deepInclude(verified, { events: 2, tornTailBytes: 0 })
          assert.deepStrictEqual((yield* Stream.runCollect(log.read(session))).map((e) => e.data), [todo("one"), todo("three")])
        })
      ))

    it.effect("an fsync that fails fails the append, and its lines are cut from the session file", () =>
      withDirectory((directory) =>
        Effect.gen(function*() {
          let syncFailures = 0
          // The fsync that makes the batch durable: the session file's, or in journal mode the journal's.
          const durableIn = (path: string) => "journal" in mode.options ? path.endsWith(".wal") : path === fileOf(directory)
          const blocking = failingBlocking((call, path) =>
            syncFailures > 0 && call === "sync" && durableIn(path) && syncFailures-- > 0 ? failure("EIO", "fsync", path) : undefined
          )
          const log = yield* yield* openedBlocking(directory, mode.options, blocking)
          yield* log.append(session, "todo/write", todo("one"))
          // Only the batch's fsync fails; the one after the cut succeeds.
          syncFailures = 1
          const error = failureOf(yield* Effect.exit(log.append(session, "todo/write", todo("two"))))
          assert.deepInclude(error.reason, { _tag: "StorageFailure", kind: "IoError" })
          assert.strictEqual(syncFailures, 0)
          assert.strictEqual((yield* log.append(session, "todo/write", todo("three"))).seq, 1)
          const verified = yield* SessionLogFile.verify({ directory }, session, TodoEvents.invariants)
          assert.deepInclude(verified, { events: 2, tornTailBytes: 0 })
        })
      ))

    it.effect("a batch written whole whose sync fails and that can't be cut: it appears when the session is read, as its failure said", () =>
      withDirectory((directory) =>
        Effect.gen(function*() {
          let broken = false
          const blocking = failingBlocking((call, path) =>
            broken && (call === "sync" || (call === "truncate" && path === fileOf(directory))) ? failure("EIO", call, path) : undefined
          )
          yield* Effect.scoped(Effect.gen(function*() {
            const log = yield* yield* openedBlocking(directory, mode.options, blocking)
            yield* log.append(session, "todo/write", todo("one"))
            broken = true
            const failed = failureOf(yield* Effect.exit(log.append(session, "todo/write", todo("two"))))
            assert.deepInclude(failed.reason, { _tag: "StorageFailure", kind: "IoError" })
            assert.include(failed.message, "so some or all of it may appear when the session is read")
          }))
          const reopened = yield* yield* openedBlocking(directory, mode.options, BlockingIo.node)
          assert.deepStrictEqual((yield* Stream.runCollect(reopened.read(session))).map((e) => e.data), [todo("one"), todo("two")])
          assert.strictEqual((yield* reopened.append(session, "todo/write", todo("three"))).seq, 2)
        })
      ))

    it.effect("a failed write that can't be cut stops the writer; reopening the log cuts it", () =>
      withDirectory((directory) =>
        Effect.gen(function*() {
          let broken = false
          const blocking = failingBlocking((call, path) =>
            broken && (call === "write" || call === "truncate") && path === fileOf(directory)
              ? failure(call === "truncate" ? "EROFS" : "EIO", call, path)
              : undefined
          )
          yield* Effect.scoped(Effect.gen(function*() {
            const log = yield* yield* openedBlocking(directory, mode.options, blocking)
            yield* failsUncut(log, directory, (on) => broken = on)
          }))
          const reopened = yield* yield* openedBlocking(directory, mode.options, BlockingIo.node)
          assert.strictEqual((yield* reopened.append(session, "todo/write", todo("four"))).seq, 1)
          const verified = yield* SessionLogFile.verify({ directory }, session, TodoEvents.invariants)
          assert.deepInclude(verified, { events: 2, tornTailBytes: 0 })
        })
      ))
  })
}

for (const mode of [{ name: "fsync mode", options: {} }, { name: "journal mode", options: { journal: true } }]) {
  describe(`Writer (${mode.name}): a contended batch's calls that fail`, () => {
    /**
     * A log over `directory` whose batches, after the first, are contended (the test clock never
     * moves): their writes and checks are `blocking`'s calls, made in place; what makes them durable,
     * and a cut, goes through `fs`.
     */
    const openedContended = (directory: string, blocking: BlockingIo.Blocking, fs: FileSystem.FileSystem) =>
      Effect.map(
        Layer.build(
          SessionLogFile.layerFileSystem({ ...mode.options, directory }).pipe(
            Layer.provide(Layer.mergeAll(NodeServices.layer, Layer.succeed(FileSystem.FileSystem, fs), Layer.succeed(BlockingIo.BlockingIo, blocking)))
          )
        ),
        (context) => SessionLog.SessionLog.pipe(Effect.provide(context))
      )
    const failure = (code: string, syscall: string, path: string) => systemError(code, syscall === "write" ? "writeAll" : syscall, path)

    it.effect("a write cut short by a full disk fails the append as DiskFull; its half is cut, and the next append follows", () =>
      withDirectory((directory) =>
        Effect.gen(function*() {
          let full = false
          const blocking = failingBlocking((call, path) =>
            full && call === "write" && path === fileOf(directory) ? failure("ENOSPC", "write", path) : undefined
          )
          const log = yield* yield* openedContended(directory, blocking, yield* FileSystem.FileSystem)
          yield* log.append(session, "todo/write", todo("one"))
          full = true
          const error = failureOf(yield* Effect.exit(log.append(session, "todo/write", todo("two"))))
          assert.deepInclude(error.reason, { _tag: "StorageFailure", kind: "DiskFull" })
          assert.include(error.message, fileOf(directory))
          full = false
          assert.strictEqual((yield* log.append(session, "todo/write", todo("three"))).seq, 1)
          const verified = yield* SessionLogFile.verify({ directory }, session, TodoEvents.invariants)
          assert.deepInclude(verified, { events: 2, tornTailBytes: 0 })
          assert.deepStrictEqual((yield* Stream.runCollect(log.read(session))).map((e) => e.data), [todo("one"), todo("three")])
        })
      ))

    it.effect("an fsync through the thread pool that fails fails the append, and its lines are cut from the session file", () =>
      withDirectory((directory) =>
        Effect.gen(function*() {
          let syncFailures = 0
          // The fsync that makes the batch durable: the session file's, or in journal mode the journal's.
          const durableIn = (path: string) => "journal" in mode.options ? path.endsWith(".wal") : path === fileOf(directory)
          const fs = failing(yield* FileSystem.FileSystem, {
            sync: (path) => syncFailures > 0 && durableIn(path) && syncFailures-- > 0 ? systemError("EIO", "sync", path) : undefined
          })
          // Node's calls, but not its own object: in journal mode the round goes through the thread pool,
          // not the journal's I/O thread (`IoThread.test.ts` fails that one's calls).
          const log = yield* yield* openedContended(directory, { ...BlockingIo.node }, fs)
          yield* log.append(session, "todo/write", todo("one"))
          // Only the batch's fsync fails; the one after the cut succeeds.
          syncFailures = 1
          const error = failureOf(yield* Effect.exit(log.append(session, "todo/write", todo("two"))))
          assert.deepInclude(error.reason, { _tag: "StorageFailure", kind: "IoError" })
          assert.strictEqual(syncFailures, 0, "the contended batch's fsync went through the thread pool")
          assert.strictEqual((yield* log.append(session, "todo/write", todo("three"))).seq, 1)
          const verified = yield* SessionLogFile.verify({ directory }, session, TodoEvents.invariants)
          assert.deepInclude(verified, { events: 2, tornTailBytes: 0 })
        })
      ))

    it.effect("a lock that can't be checked fails the append as a storage failure, writing nothing; the writer goes on", () =>
      withDirectory((directory) =>
        Effect.gen(function*() {
          let denied = false
          const lockPath = `${directory}/${SessionFile.lockName(session)}`
          const blocking = failingBlocking((call, path) =>
            denied && call === "lstat" && path === lockPath ? failure("EACCES", "lstat", path) : undefined
          )
          const log = yield* yield* openedContended(directory, blocking, yield* FileSystem.FileSystem)
          yield* log.append(session, "todo/write", todo("one"))
          denied = true
          const error = failureOf(yield* Effect.exit(log.append(session, "todo/write", todo("two"))))
          assert.deepInclude(error.reason, { _tag: "StorageFailure" })
          assert.include(error.message, "EACCES")
          denied = false
          assert.strictEqual((yield* log.append(session, "todo/write", todo("three"))).seq, 1, "not stopped: the lock was not lost")
          assert.deepStrictEqual((yield* Stream.runCollect(log.read(session))).map((e) => e.data), [todo("one"), todo("three")])
        })
      ))

    it.effect("a failed write that can't be cut stops the writer; reopening the log cuts it", () =>
      withDirectory((directory) =>
        Effect.gen(function*() {
          let broken = false
          const blocking = failingBlocking((call, path) =>
            broken && call === "write" && path === fileOf(directory) ? failure("EIO", "write", path) : undefined
          )
          const fs = failing(yield* FileSystem.FileSystem, {
            truncate: (path) => broken && path === fileOf(directory) ? systemError("EROFS", "truncate", path) : undefined
          })
          yield* Effect.scoped(Effect.gen(function*() {
            const log = yield* yield* openedContended(directory, blocking, fs)
            yield* failsUncut(log, directory, (on) => broken = on)
          }))
          const reopened = yield* yield* openedBlocking(directory, mode.options, BlockingIo.node)
          assert.strictEqual((yield* reopened.append(session, "todo/write", todo("four"))).seq, 1)
          const verified = yield* SessionLogFile.verify({ directory }, session, TodoEvents.invariants)
          assert.deepInclude(verified, { events: 2, tornTailBytes: 0 })
        })
      ))
  })
}

for (const mode of [{ name: "fsync mode", options: {} }, { name: "journal mode", options: { journal: true } }]) {
  describe(`Writer (${mode.name}): without blocking calls, a batch that fails`, () => {
    it.effect("a failed write that can't be cut fails saying its lines may stay, and stops the writer", () =>
      withDirectory((directory) =>
        Effect.gen(function*() {
          let broken = false
          const fs = failing(yield* FileSystem.FileSystem, {
            write: () => broken ? systemError("EIO", "writeAll", fileOf(directory)) : undefined,
            truncate: (path) => broken && path === fileOf(directory) ? systemError("EROFS", "truncate", path) : undefined
          })
          const log = yield* Effect.map(
            Layer.build(
              SessionLogFile.layerFileSystem({ ...mode.options, directory, blocking: false }).pipe(
                Layer.provide(Layer.mergeAll(NodeServices.layer, Layer.succeed(FileSystem.FileSystem, fs)))
              )
            ),
            (context) => SessionLog.SessionLog.pipe(Effect.provide(context))
          )
          yield* failsUncut(yield* log, directory, (on) => broken = on)
        })
      ))
  })
}

/** Node's FileSystem, but the files opened at paths `hidden` names have their descriptor hidden. */
const withoutDescriptors = (real: FileSystem.FileSystem, hidden: (path: string) => boolean) =>
  FileSystem.FileSystem.of({
    ...real,
    open: (path, options) =>
      Effect.map(real.open(path, options), (file) =>
        !hidden(path) ? file : new Proxy(file, {
          has: (target, key) => key !== "fd" && Reflect.has(target, key),
          get: (target, key) => {
            if (key === "fd") return undefined
            const value: unknown = Reflect.get(target, key)
            return typeof value === "function" ? value.bind(target) : value
          }
        }))
  })

/** Node's blocking calls, each recorded by name (`calls`). */
const recordingBlocking = () => {
  const calls: Array<string> = []
  const blocking = Object.fromEntries(
    Object.entries(BlockingIo.node).map(([name, call]) => [name, (...args: Array<never>) => {
      calls.push(name)
      return (call as (...args: Array<never>) => unknown)(...args)
    }])
  ) as unknown as BlockingIo.Blocking
  return { blocking, calls }
}

describe("Writer: files without a descriptor (another platform's FileSystem)", () => {
  it.effect("a journal without one, beside session files with one: lone batches go through its committer, and every one lands", () =>
    withDirectory((directory) =>
      Effect.gen(function*() {
        // A lone batch would write and sync the journal itself; with no descriptor it can't, and a
        // committer asked to commit it so would refuse it.
        const fs = withoutDescriptors(yield* FileSystem.FileSystem, (path) => path.endsWith(Journal.extension))
        const { blocking, calls } = recordingBlocking()
        yield* Effect.scoped(Effect.gen(function*() {
          const log = yield* Effect.map(
            Layer.build(
              SessionLogFile.layerFileSystem({ directory, journal: true }).pipe(
                Layer.provide(Layer.mergeAll(NodeServices.layer, Layer.succeed(FileSystem.FileSystem, fs), Layer.succeed(BlockingIo.BlockingIo, blocking)))
              )
            ),
            (context) => SessionLog.SessionLog.pipe(Effect.provide(context))
          ).pipe(Effect.flatten)
          for (let i = 0; i < 3; i++) yield* alone(log).append(session, "todo/write", todo(`one ${i}`))
          assert.lengthOf(yield* Stream.runCollect(log.read(session)), 3)
        }))
        const verified = yield* SessionLogFile.verify({ directory }, session, TodoEvents.invariants)
        assert.deepInclude(verified, { events: 3, tornTailBytes: 0 })
        // The session file's own calls were blocking ones (its write, at least); none synced a file.
        assert.include(calls, "write")
        assert.deepStrictEqual(calls.filter((name) => name === "sync" || name === "datasync"), [], "the journal was synced by its committer")
      })
    ))

  it.effect("every batch, lone or contended, goes through FileSystem: no blocking call on a file, and every append lands", () =>
    withDirectory((directory) =>
      Effect.gen(function*() {
        const fs = withoutDescriptors(yield* FileSystem.FileSystem, () => true)
        const { blocking, calls } = recordingBlocking()
        for (const journal of [false, true]) {
          const id = journal ? "journaled" : "synced"
          yield* Effect.scoped(Effect.gen(function*() {
            const log = yield* Effect.map(
              Layer.build(
                SessionLogFile.layerFileSystem({ directory: `${directory}/${id}`, journal }).pipe(
                  Layer.provide(Layer.mergeAll(NodeServices.layer, Layer.succeed(FileSystem.FileSystem, fs), Layer.succeed(BlockingIo.BlockingIo, blocking)))
                )
              ),
              (context) => SessionLog.SessionLog.pipe(Effect.provide(context))
            ).pipe(Effect.flatten)
            // Lone batches (see `alone`), then a burst of contended ones.
            for (let i = 0; i < 3; i++) yield* alone(log).append(session, "todo/write", todo(`one ${i}`))
            yield* Effect.forEach([0, 1, 2], (i) => log.append(SessionId.decodeSync(`other-${i}`), "todo/write", todo("two")), {
              concurrency: "unbounded"
            })
            assert.lengthOf(yield* Stream.runCollect(log.read(session)), 3)
          }))
          const verified = yield* SessionLogFile.verify({ directory: `${directory}/${id}` }, session, TodoEvents.invariants)
          assert.deepInclude(verified, { events: 3, tornTailBytes: 0 })
        }
        // An lstat names a path, not a descriptor: it is made in place either way.
        assert.include(calls, "lstat")
        assert.deepStrictEqual(calls.filter((name) => name !== "lstat"), [], "no blocking call on a file that has no descriptor")
      })
    ))
})
