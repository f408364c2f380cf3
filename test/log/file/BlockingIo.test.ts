import { NodeServices } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect, FileSystem, Option, PlatformError, Result } from "effect"
import nodeFs from "node:fs"
import { syncBuiltinESMExports } from "node:module"
import * as BlockingIo from "../../../src/log/file/BlockingIo.ts"
import { hasProcFds } from "./FileTest.ts"

const bytes = (text: string) => new TextEncoder().encode(text)

/**
 * The descriptors `fsyncSync` is called with while the scope is open: Node's own function, wrapped
 * and republished to ES module importers (`syncBuiltinESMExports`), since an fsync leaves no trace
 * a test can read back.
 */
const fsyncedDescriptors = Effect.acquireRelease(
  Effect.sync(() => {
    const original = nodeFs.fsyncSync
    const fds: Array<number> = []
    nodeFs.fsyncSync = (fd) => {
      fds.push(fd)
      original(fd)
    }
    syncBuiltinESMExports()
    return { fds, original }
  }),
  ({ original }) =>
    Effect.sync(() => {
      nodeFs.fsyncSync = original
      syncBuiltinESMExports()
    })
)

const withFile = <A, E>(body: (fs: FileSystem.FileSystem, path: string) => Effect.Effect<A, E, FileSystem.FileSystem>) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const directory = yield* fs.realPath(yield* fs.makeTempDirectoryScoped({ prefix: "todo-write-io-" }))
    const path = `${directory}/s.jsonl`
    yield* fs.writeFileString(path, "head\n")
    return yield* body(fs, path)
  }).pipe(Effect.scoped, Effect.provide(NodeServices.layer))

const descriptor = (file: FileSystem.File): number => {
  const fd = BlockingIo.descriptorOf(file)
  assert.isDefined(fd, "Node's files carry their descriptor")
  return fd!
}

describe("BlockingIo.node", () => {
  it.effect("writes at the end of a file open for appending, syncs it and cuts it, answering undefined when done", () =>
    withFile((fs, path) =>
      Effect.gen(function*() {
        yield* Effect.scoped(Effect.gen(function*() {
          const fd = descriptor(yield* fs.open(path, { flag: "a" }))
          assert.isUndefined(BlockingIo.node.write(fd, path, bytes("one\n")))
          assert.isUndefined(BlockingIo.node.write(fd, path, bytes("two\n")))
          assert.isUndefined(BlockingIo.node.sync(fd, path))
        }))
        assert.strictEqual(yield* fs.readFileString(path), "head\none\ntwo\n")
        yield* Effect.scoped(Effect.gen(function*() {
          const fd = descriptor(yield* fs.open(path, { flag: "a" }))
          assert.isUndefined(BlockingIo.node.truncate(fd, path, 9))
          assert.isUndefined(BlockingIo.node.write(fd, path, bytes("three\n")))
        }))
        assert.strictEqual(yield* fs.readFileString(path), "head\none\nthree\n", "cut, and the next write goes to the new end")
      })
    ))

  it.effect("sync fsyncs the descriptor of the file it is given, and nothing else (not its directory)", () =>
    withFile((fs, path) =>
      Effect.scoped(Effect.gen(function*() {
        const file = yield* fs.open(path, { flag: "a" })
        const fd = "fd" in file ? file.fd : undefined
        assert.isNumber(fd, "Node's File keeps its descriptor as fd")
        assert.strictEqual(BlockingIo.descriptorOf(file), fd, "the descriptor a lone batch's calls are made on")
        const { fds } = yield* fsyncedDescriptors
        assert.isUndefined(BlockingIo.node.sync(descriptor(file), path))
        assert.deepStrictEqual(fds, [fd], "node.sync must fsync the file's own descriptor, once, before it returns")
      }))
    ))

  it.effect("lstat: the identity and size of what is at a path, a link itself rather than its target; nothing for a missing path", () =>
    withFile((fs, path) =>
      Effect.gen(function*() {
        const found = Result.getOrThrow(BlockingIo.node.lstat(path))
        const info = yield* fs.stat(path)
        assert.deepStrictEqual(found, { dev: info.dev, ino: Option.getOrUndefined(info.ino), size: 5n })
        assert.deepStrictEqual(yield* BlockingIo.fromFileSystem(fs).lstat(path), found, "both ways agree")
        yield* fs.symlink(path, `${path}.link`)
        const link = Result.getOrThrow(BlockingIo.node.lstat(`${path}.link`))
        assert.notStrictEqual(link?.ino, found?.ino, "the link, not its target")
        assert.isUndefined(Result.getOrThrow(BlockingIo.node.lstat(`${path}.missing`)))
        assert.isUndefined(yield* BlockingIo.fromFileSystem(fs).lstat(`${path}.missing`))
        const notADirectory = BlockingIo.node.lstat(`${path}/below`)
        assert.isTrue(Result.isFailure(notADirectory), "a failure other than a missing path is a failure")
      })
    ))

  it.effect("stillAt: the file on a descriptor is at its path and ends at the byte given; anything else, or no telling, is false", () =>
    withFile((fs, path) =>
      Effect.scoped(Effect.gen(function*() {
        const file = yield* fs.open(path, { flag: "a+" })
        const fd = descriptor(file)
        const still = (end: number, at = path) => BlockingIo.node.stillAt(fd, at, end)
        // Told only where Linux's /proc/self/fd is; elsewhere it can't tell, and lstat decides.
        const told = (answer: boolean, message: string) => assert.strictEqual(answer, hasProcFds, message)
        told(still(5), "\"head\\n\" ends at byte 5")
        assert.isFalse(still(4), "it goes on past byte 4")
        assert.isFalse(still(6), "it ends before byte 6")
        assert.isFalse(still(0), "no file ends at byte 0 with a last byte to read")
        assert.isUndefined(BlockingIo.node.write(fd, path, bytes("one\n")))
        told(still(9), "its own append moves the end")
        assert.isFalse(still(9, `${path}/../s.jsonl`), "a path that isn't the canonical one can't be told")

        // Another writer's bytes after ours.
        yield* fs.writeFileString(path, "x\n", { flag: "a" })
        assert.isFalse(still(9), "someone else appended")
        told(still(11), "the end after the other writer's bytes")

        // Moved away, then something else put at the path: the descriptor's file is not at it.
        yield* fs.rename(path, `${path}.moved`)
        assert.isFalse(still(11), "moved")
        told(still(11, `${path}.moved`), "where it was moved to")
        yield* fs.writeFileString(path, "head\none\nx\n")
        assert.isFalse(still(11), "replaced by a file of the same size")
        // Deleted: the descriptor's path reads "… (deleted)".
        yield* fs.remove(`${path}.moved`)
        assert.isFalse(still(11, `${path}.moved`), "deleted")
        // A path that ends so itself can't be told from a deleted file's.
        yield* fs.writeFileString(`${path} (deleted)`, "head\n")
        const named = descriptor(yield* fs.open(`${path} (deleted)`, { flag: "a+" }))
        assert.isFalse(BlockingIo.node.stillAt(named, `${path} (deleted)`, 5), "can't tell: lstat decides")
      }))
    ))

  it.effect("stillAt can't tell through a descriptor that can't be read, or one that isn't a file's, or at byte 0", () =>
    withFile((fs, path) =>
      Effect.scoped(Effect.gen(function*() {
        const writeOnly = descriptor(yield* fs.open(path, { flag: "a" }))
        assert.isFalse(BlockingIo.node.stillAt(writeOnly, path, 5), "the last byte can't be read back")
        assert.isFalse(BlockingIo.node.stillAt(-1, path, 5), "no such descriptor")
        // At end 0 the read would be at position -1, which Node takes as the descriptor's own position.
        yield* fs.writeFileString(`${path}.one`, "x")
        const oneByte = descriptor(yield* fs.open(`${path}.one`, { flag: "a+" }))
        assert.isFalse(BlockingIo.node.stillAt(oneByte, `${path}.one`, 0), "a file with a byte doesn't end at byte 0")
      }))
    ))

  it("lstat's plain-number stat is trusted only while exact: a device or inode number of 2^53 or more may be rounded", () => {
    assert.deepStrictEqual(BlockingIo.fromNumbers({ dev: 2049, ino: 2 ** 53 - 1, size: 5 }), {
      dev: 2049n,
      ino: 2n ** 53n - 1n,
      size: 5n
    })
    // 2^53 + 1 reads as 2^53: the same number as the inode 2^53, so neither can be told apart.
    assert.isUndefined(BlockingIo.fromNumbers({ dev: 2049, ino: 2 ** 53 + 1, size: 5 }))
    assert.isUndefined(BlockingIo.fromNumbers({ dev: 2 ** 64, ino: 7, size: 5 }))
  })

  it.effect("a failed call is a PlatformError naming the file, with the system error as its cause", () =>
    withFile((fs, path) =>
      Effect.scoped(Effect.gen(function*() {
        const fd = descriptor(yield* fs.open(path, { flag: "r" }))
        const error = BlockingIo.node.write(fd, path, bytes("x\n"))
        assert.isTrue(PlatformError.isPlatformError(error))
        assert.include(error!.message, path)
        const reason = error!.reason
        assert.strictEqual(reason._tag === "BadArgument" ? undefined : (reason.cause as { code?: string }).code, "EBADF")
        const cut = BlockingIo.node.truncate(fd, path, 0)
        assert.isTrue(PlatformError.isPlatformError(cut), "a read-only descriptor can't be cut either")
        assert.strictEqual(yield* fs.readFileString(path), "head\n", "nothing was written")
      }))
    ))
})

describe("BlockingIo.inPlace", () => {
  it.effect("a Node file's calls are the blocking ones, made when the effect runs", () =>
    withFile((fs, path) =>
      Effect.scoped(Effect.gen(function*() {
        const calls: Array<string> = []
        const recording: BlockingIo.Blocking = {
          ...BlockingIo.node,
          write: (fd, p, data) => (calls.push("write"), BlockingIo.node.write(fd, p, data)),
          sync: (fd, p) => (calls.push("sync"), BlockingIo.node.sync(fd, p))
        }
        const io = BlockingIo.inPlace(recording, BlockingIo.fromFileSystem(fs))
        const file = yield* fs.open(path, { flag: "a" })
        const write = io.write(file, path, bytes("one\n"))
        assert.deepStrictEqual(calls, [], "nothing happens until the effect runs")
        yield* write
        yield* io.sync(file, path)
        assert.deepStrictEqual(calls, ["write", "sync"])
        assert.strictEqual(yield* fs.readFileString(path), "head\none\n")
      }))
    ))

  it.effect("a file that isn't Node's (no descriptor) is written and synced through its own methods", () =>
    Effect.gen(function*() {
      const calls: Array<string> = []
      const foreign = {
        writeAll: (data: Uint8Array) => Effect.sync(() => void calls.push(`write ${data.length}`)),
        sync: Effect.sync(() => void calls.push("sync"))
      } as unknown as FileSystem.File
      assert.isUndefined(BlockingIo.descriptorOf(foreign))
      const fs = yield* FileSystem.FileSystem
      const io = BlockingIo.inPlace(BlockingIo.node, BlockingIo.fromFileSystem(fs))
      yield* io.write(foreign, "/nowhere", bytes("abc"))
      yield* io.sync(foreign, "/nowhere")
      assert.deepStrictEqual(calls, ["write 3", "sync"])
    }).pipe(Effect.provide(NodeServices.layer)))
})
