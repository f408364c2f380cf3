/**
 * Shared pieces of the file backend's tests: a temporary directory, a log opened over it (raw or
 * checked), and a FileSystem whose operations a test can intercept.
 */
import { NodeServices } from "@effect/platform-node"
import { Effect, FileSystem, Layer, type Path, PlatformError, type Scope, Stream } from "effect"
import { CheckedSessionLog } from "../../../src/log/CheckedSessionLog.ts"
import * as BlockingIo from "../../../src/log/file/BlockingIo.ts"
import * as SessionFile from "../../../src/log/file/Format.ts"
import type * as IoCalls from "../../../src/log/file/IoCalls.ts"
import * as SessionLogFile from "../../../src/log/file/SessionLogFile.ts"
import * as SessionId from "../../../src/log/SessionId.ts"
import * as SessionLog from "../../../src/log/SessionLog.ts"
import * as TodoEvents from "../../../src/todo/TodoEvents.ts"
import * as nodeFs from "node:fs"
import { existsSync } from "node:fs"

export const session = SessionId.decodeSync("file-session")

export const todo = (content: string) => ({ todos: [{ content, status: "pending" }] })

/** The path of a session's file in `directory`. */
export const fileOf = (directory: string, id: string = session) => `${directory}/${SessionFile.fileName(id)}`

/**
 * `fs` in place of the real file system, lone batches' calls included: with no blocking calls
 * (`BlockingIo` none), they go through it too, so that what it intercepts, it intercepts on every
 * path. (The blocking calls' own failures are tested with a `BlockingIo` that fails.)
 */
export const replacing = (fs: FileSystem.FileSystem) =>
  Layer.mergeAll(
    NodeServices.layer,
    Layer.succeed(FileSystem.FileSystem, fs),
    Layer.succeed(BlockingIo.BlockingIo, undefined)
  )

/** The raw file log over `directory`, with options, on the real file system unless one is given. */
export const layer = (
  directory: string,
  options: Omit<SessionLogFile.Options, "directory"> = {},
  fs?: FileSystem.FileSystem
) => SessionLogFile.layerFileSystem({ ...options, directory }).pipe(Layer.provide(fs === undefined ? NodeServices.layer : replacing(fs)))

/** Runs `use` against the checked file log over `directory`, opened for this call only. */
export const open = <A, E>(
  directory: string,
  use: (log: SessionLog.Service) => Effect.Effect<A, E>,
  options: Omit<SessionLogFile.Options, "directory"> = {}
) => Effect.flatMap(CheckedSessionLog, use).pipe(Effect.provide(TodoEvents.layerChecked.pipe(Layer.provide(layer(directory, options)))))

/** Runs `use` against the raw file log over `directory`. */
export const openRaw = <A, E>(
  directory: string,
  use: (log: SessionLog.Service) => Effect.Effect<A, E>,
  options: Omit<SessionLogFile.Options, "directory"> = {},
  fs?: FileSystem.FileSystem
) => Effect.flatMap(SessionLog.SessionLog, use).pipe(Effect.provide(layer(directory, options, fs)))

export const readAll = (log: SessionLog.Service, id: SessionId.SessionId = session) => Stream.runCollect(log.read(id))

/** Whether this system has Linux's `/proc/self/fd`, where `BlockingIo.node.stillAt` can tell anything. */
export const hasProcFds = existsSync("/proc/self/fd")

/** Runs `body` with a fresh temporary directory (removed afterwards) and the Node services. */
export const withDirectory = <A, E>(
  body: (directory: string) => Effect.Effect<A, E, FileSystem.FileSystem | Path.Path | Scope.Scope>
) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    // Its canonical path (the temporary directory may be reached through a link, as on macOS), as
    // a lone journal batch's stat-free check needs to tell anything.
    return yield* body(yield* fs.realPath(yield* fs.makeTempDirectoryScoped({ prefix: "todo-write-" })))
  }).pipe(Effect.scoped, Effect.provide(NodeServices.layer))

/** A failure as Node's file system reports it: the errno code is on the cause. */
export const systemError = (code: string, method: string, pathOrDescriptor: string | number) =>
  PlatformError.systemError({
    _tag: code === "EACCES" ? "PermissionDenied" : "Unknown",
    module: "FileSystem",
    method,
    pathOrDescriptor,
    syscall: method === "writeAll" ? "write" : "open",
    cause: Object.assign(new Error(`${code}: failed, ${method}`), { code })
  })

/**
 * The real file system, but a file opened at a path for which `overrides` answers property descriptors
 * has them over its own (`Object.create`): a fake call for that file alone.
 */
export const overriding = (
  real: FileSystem.FileSystem,
  overrides: (path: string, file: FileSystem.File) => PropertyDescriptorMap | undefined
) =>
  FileSystem.FileSystem.of({
    ...real,
    open: (path, o) =>
      Effect.map(real.open(path, o), (file): FileSystem.File => {
        const own = overrides(path, file)
        return own === undefined ? file : Object.create(file, own)
      })
  })

/**
 * The real file system, except that `open(path, flag)` may answer an error for an open, `write()`
 * one for a write to any file opened through it, and `sync(path)` and `truncate(path)` one for a
 * sync or a cut of the file opened at `path` (through `FileSystem`: blocking calls bypass them).
 */
export const failing = (
  real: FileSystem.FileSystem,
  options: {
    readonly open?: (path: string, flag: FileSystem.OpenFlag | undefined) => PlatformError.PlatformError | undefined
    readonly write?: () => PlatformError.PlatformError | undefined
    readonly sync?: (path: string) => PlatformError.PlatformError | undefined
    readonly truncate?: (path: string) => PlatformError.PlatformError | undefined
  }
) =>
  FileSystem.FileSystem.of({
    ...real,
    open: (path, o) => {
      const refused = options.open?.(path, o?.flag)
      if (refused !== undefined) return Effect.fail(refused)
      const or = <A>(error: PlatformError.PlatformError | undefined, call: () => Effect.Effect<A, PlatformError.PlatformError>) =>
        error === undefined ? call() : Effect.fail(error)
      return Effect.map(real.open(path, o), (file) =>
        Object.create(file, {
          writeAll: { value: (bytes: Uint8Array) => or(options.write?.(), () => file.writeAll(bytes)) },
          sync: { get: () => or(options.sync?.(path), () => file.sync) },
          truncate: { value: (length?: number) => or(options.truncate?.(path), () => file.truncate(length)) }
        }))
    }
  })

/**
 * Node's calls as the journal's I/O thread makes them (`IoCalls.Calls`), except that `fail` may answer
 * an error to throw instead of making one (`target`: the path of an `lstat`, else the descriptor).
 */
export const failingCalls = (fail: (call: keyof IoCalls.Calls, target: string | number) => Error | undefined): IoCalls.Calls => {
  const or = <A>(call: keyof IoCalls.Calls, target: string | number, make: () => A): A => {
    const error = fail(call, target)
    if (error !== undefined) throw error
    return make()
  }
  return {
    lstatSync: (path, options) => or("lstatSync", path, () => nodeFs.lstatSync(path, options)),
    statSync: (path, options) => or("statSync", path, () => nodeFs.statSync(path, options)),
    opendirSync: (path) => or("opendirSync", path, () => nodeFs.opendirSync(path)),
    writeSync: (fd, buffer, offset, length, position) => or("writeSync", fd, () => nodeFs.writeSync(fd, buffer, offset, length, position)),
    writevSync: (fd, buffers, position) => or("writevSync", fd, () => nodeFs.writevSync(fd, buffers, position)),
    fdatasyncSync: (fd) => or("fdatasyncSync", fd, () => nodeFs.fdatasyncSync(fd)),
    fsyncSync: (fd) => or("fsyncSync", fd, () => nodeFs.fsyncSync(fd)),
    ftruncateSync: (fd, length) => or("ftruncateSync", fd, () => nodeFs.ftruncateSync(fd, length))
  }
}

/** An error as Node's calls throw it: its errno code on it. */
export const errno = (code: string) => Object.assign(new Error(`${code}: failed`), { code })
