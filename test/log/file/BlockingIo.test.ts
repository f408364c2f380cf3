import { NodeServices } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, FileSystem, Option, PlatformError } from "effect"
import nodeFs from "node:fs"
import { syncBuiltinESMExports } from "node:module"
import * as BlockingIo from "../../../src/log/file/BlockingIo.ts"

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
    const directory = yield* fs.makeTempDirectoryScoped({ prefix: "todo-write-io-" })
    const path = `${directory}/s.jsonl`
    yield* fs.writeFileString(path, "head\n")
    return yield* body(fs, path)
  }).pipe(Effect.scoped, Effect.provide(NodeServices.layer))

describe("BlockingIo.node", () => {
  it.effect("writes at the end of a file open for appending, and syncs it", () =>
    withFile((fs, path) =>
      Effect.gen(function*() {
        yield* Effect.scoped(Effect.gen(function*() {
          const file = yield* fs.open(path, { flag: "a" })
          yield* BlockingIo.node.write(file, path, bytes("one\n"))
          yield* BlockingIo.node.write(file, path, bytes("two\n"))
          yield* BlockingIo.node.sync(file, path)
        }))
        assert.strictEqual(yield* fs.readFileString(path), "head\none\ntwo\n")
      })
    ))

  it.effect("sync fsyncs the descriptor of the file it is given, and nothing else (not its directory)", () =>
    withFile((fs, path) =>
      Effect.scoped(Effect.gen(function*() {
        const file = yield* fs.open(path, { flag: "a" })
        const fd = "fd" in file ? file.fd : undefined
        assert.isNumber(fd, "Node's File keeps its descriptor as fd")
        const { fds } = yield* fsyncedDescriptors
        yield* BlockingIo.node.sync(file, path)
        assert.deepStrictEqual(fds, [fd], "node.sync must fsync the file's own descriptor, once, before it returns")
      }))
    ))

  it.effect("lstat: the identity and size of what is at a path, a link itself rather than its target; nothing for a missing path", () =>
    withFile((fs, path) =>
      Effect.gen(function*() {
        const found = yield* BlockingIo.node.lstat(path)
        const info = yield* fs.stat(path)
        assert.deepStrictEqual(found, { dev: info.dev, ino: Option.getOrUndefined(info.ino), size: 5n })
        assert.deepStrictEqual(yield* BlockingIo.fromFileSystem(fs).lstat(path), found, "both ways agree")
        yield* fs.symlink(path, `${path}.link`)
        const link = yield* BlockingIo.node.lstat(`${path}.link`)
        assert.notStrictEqual(link?.ino, found?.ino, "the link, not its target")
        assert.isUndefined(yield* BlockingIo.node.lstat(`${path}.missing`))
        assert.isUndefined(yield* BlockingIo.fromFileSystem(fs).lstat(`${path}.missing`))
      })
    ))

  it.effect("a failed call is a PlatformError naming the file, with the system error as its cause", () =>
    withFile((fs, path) =>
      Effect.scoped(Effect.gen(function*() {
        const readOnly = yield* fs.open(path, { flag: "r" })
        const exit = yield* Effect.exit(BlockingIo.node.write(readOnly, path, bytes("x\n")))
        assert.isTrue(Exit.isFailure(exit))
        if (Exit.isFailure(exit)) {
          const error = exit.cause.reasons[0]
          assert.strictEqual(error?._tag, "Fail")
          if (error?._tag === "Fail") {
            assert.isTrue(PlatformError.isPlatformError(error.error))
            assert.include(error.error.message, path)
            const reason = error.error.reason
            assert.strictEqual(reason._tag === "BadArgument" ? undefined : (reason.cause as { code?: string }).code, "EBADF")
          }
        }
        assert.strictEqual(yield* fs.readFileString(path), "head\n", "nothing was written")
      }))
    ))

  it.effect("a file that isn't Node's (no descriptor) is written and synced through its own methods", () =>
    Effect.gen(function*() {
      const calls: Array<string> = []
      const foreign = {
        writeAll: (data: Uint8Array) => Effect.sync(() => void calls.push(`write ${data.length}`)),
        sync: Effect.sync(() => void calls.push("sync"))
      } as unknown as FileSystem.File
      yield* BlockingIo.node.write(foreign, "/nowhere", bytes("abc"))
      yield* BlockingIo.node.sync(foreign, "/nowhere")
      assert.deepStrictEqual(calls, ["write 3", "sync"])
    }))
})
