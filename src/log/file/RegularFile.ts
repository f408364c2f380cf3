/**
 * Opening the log's own files (session files, locks, journals) safely: never through a symbolic
 * link, and never anything but a regular file. A link named `a.jsonl` pointing out of the directory
 * would otherwise have its target truncated and overwritten; a FIFO would block a read forever.
 *
 * Each open first checks the path with `lstat` (which doesn't follow links) and refuses anything
 * but a regular file, then opens with `O_NOFOLLOW` (so a link swapped in after the check fails the
 * open instead of being followed), then checks the open handle is a regular file.
 *
 * Residual risk: a FIFO or device swapped in between the check and the open is opened before the
 * handle check refuses it, and opening a FIFO for reading waits for a writer. Only someone who can
 * write to the session directory can do that, and such a user can already destroy its files; the
 * directory must belong to the log's user alone.
 */
import * as Effect from "effect/Effect"
import type * as FileSystem from "effect/FileSystem"
import * as Option from "effect/Option"
import * as PlatformError from "effect/PlatformError"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { UnsafePath } from "../SessionLogError.ts"

/** What a file type is called in an error. */
const describe = (type: FileSystem.File.Type): string => {
  switch (type) {
    case "SymbolicLink":
      return "is a symbolic link: the log never follows links, so nothing outside its directory is read or written"
    case "FIFO":
      return "is a FIFO (named pipe), not a regular file"
    case "Directory":
      return "is a directory, not a regular file"
    case "Socket":
      return "is a socket, not a regular file"
    case "BlockDevice":
    case "CharacterDevice":
      return "is a device, not a regular file"
    default:
      return "is not a regular file"
  }
}

const unsafe = (path: string, type: FileSystem.File.Type) => new UnsafePath({ path, detail: describe(type) })

const isNotFound = (error: PlatformError.PlatformError) => error.reason._tag === "NotFound"

/**
 * Whether a regular file is at `path`: `false` if nothing is; fails with `UnsafePath` if something
 * else is (a link, a FIFO…), without following or opening it.
 */
export const exists = (
  fs: FileSystem.FileSystem,
  path: string
): Effect.Effect<boolean, UnsafePath | PlatformError.PlatformError> =>
  fs.lstat(path).pipe(
    Effect.map((info) => Option.some(info.type)),
    Effect.catchIf(isNotFound, () => Effect.succeed(Option.none<FileSystem.File.Type>())),
    Effect.flatMap(Option.match({
      onNone: () => Effect.succeed(false),
      onSome: (type) => type === "File" ? Effect.succeed(true) : Effect.fail(unsafe(path, type))
    }))
  )

/** A system error whose code says the final component was a link that `O_NOFOLLOW` refused. */
const isLoop = (error: PlatformError.PlatformError) =>
  error.reason._tag !== "BadArgument" && typeof error.reason.cause === "object" && error.reason.cause !== null &&
  "code" in error.reason.cause && error.reason.cause.code === "ELOOP"

/** `O_NOFOLLOW` is not available (Windows): the `lstat` check has to do. */
const noFollowUnsupported = (error: PlatformError.PlatformError) =>
  error.reason._tag === "BadArgument" && (error.reason.description ?? "").includes("noFollow")

/**
 * Opens the regular file at `path` for the scope, never through a link, with what it was when
 * opened (its `stat`). With a flag that creates (`w`, `a`, `wx`…), a missing file is created; a
 * dangling link is refused, not followed.
 */
export const opened = (
  fs: FileSystem.FileSystem,
  path: string,
  flag: FileSystem.OpenFlag
): Effect.Effect<
  { readonly file: FileSystem.File; readonly info: FileSystem.File.Info },
  UnsafePath | PlatformError.PlatformError,
  Scope.Scope
> =>
  Effect.gen(function*() {
    const found = yield* exists(fs, path)
    if (!found && (flag === "r" || flag === "r+")) {
      return yield* PlatformError.systemError({
        _tag: "NotFound",
        module: "FileSystem",
        method: "open",
        pathOrDescriptor: path,
        description: "no such file"
      })
    }
    const file = yield* fs.open(path, { flag, noFollow: true }).pipe(
      Effect.catchIf(noFollowUnsupported, () => fs.open(path, { flag })),
      Effect.catchIf(isLoop, () => Effect.fail(unsafe(path, "SymbolicLink")))
    )
    const info = yield* file.stat
    if (info.type !== "File") return yield* Effect.fail(unsafe(path, info.type))
    return { file, info }
  })

/** The same, answering the file alone. */
export const open = (
  fs: FileSystem.FileSystem,
  path: string,
  flag: FileSystem.OpenFlag
): Effect.Effect<FileSystem.File, UnsafePath | PlatformError.PlatformError, Scope.Scope> =>
  Effect.map(opened(fs, path, flag), ({ file }) => file)

/** Reads at most `limit` bytes of the regular file at `path`, from its start. */
export const read = (
  fs: FileSystem.FileSystem,
  path: string,
  limit: number
): Effect.Effect<Uint8Array, UnsafePath | PlatformError.PlatformError> =>
  Effect.scoped(Effect.gen(function*() {
    const file = yield* open(fs, path, "r")
    const size = Math.min(limit, Number((yield* file.stat).size))
    const bytes = yield* file.readAlloc(size, { position: 0n })
    return bytes._tag === "Some" ? bytes.value : new Uint8Array(0)
  }))

const decoder = new TextDecoder()

/** The text of the regular file at `path`, at most `limit` bytes of it. */
export const readString = (fs: FileSystem.FileSystem, path: string, limit: number) =>
  Effect.map(read(fs, path, limit), (bytes) => decoder.decode(bytes))

/** The regular file at `path` from `offset` on, in chunks; the file is closed when the stream ends. */
export const stream = (
  fs: FileSystem.FileSystem,
  path: string,
  options: { readonly offset: number; readonly chunkSize: number }
): Stream.Stream<Uint8Array, UnsafePath | PlatformError.PlatformError> =>
  Stream.unwrap(Effect.map(open(fs, path, "r"), (file) =>
    Stream.unfold(options.offset, (position) =>
      Effect.map(
        file.readAlloc(options.chunkSize, { position: BigInt(position) }),
        (chunk) => chunk._tag === "Some" && chunk.value.length > 0 ? [chunk.value, position + chunk.value.length] as const : undefined
      ))))

/**
 * A failure of an operation on an open file, naming the file's path instead of its descriptor, so
 * that "the disk is full" says which file.
 */
export const atPath = (path: string) => (error: PlatformError.PlatformError): PlatformError.PlatformError => {
  const reason = error.reason
  if (reason._tag === "BadArgument" || typeof reason.pathOrDescriptor !== "number") return error
  return PlatformError.systemError({
    _tag: reason._tag,
    module: reason.module,
    method: reason.method,
    pathOrDescriptor: path,
    description: reason.description,
    syscall: reason.syscall,
    cause: reason.cause
  })
}

/** Makes a directory entry (a file created or removed in it) durable. */
export const syncDirectory = (fs: FileSystem.FileSystem, directory: string) =>
  Effect.scoped(Effect.flatMap(fs.open(directory, { flag: "r" }), (dir) => dir.sync))
