/**
 * The I/O of one batch, made either through `FileSystem` (each call a round trip through libuv's
 * thread pool) or with blocking system calls on the calling thread. A lone append pays for every
 * round trip in latency: a write, an fsync and two `lstat`s through the thread pool cost several
 * times the two system calls that make it durable. When no other session is appending, the file log
 * makes those calls blocking, as SQLite does; while sessions append concurrently it goes through the
 * thread pool, so that their fsyncs overlap and the event loop stays free.
 *
 * Two shapes: `Io`, calls as effects (through `FileSystem`, or blocking ones made in place), for
 * batches that go through the thread pool; and `Blocking`, plain calls that answer at once with
 * their failure as a value, so that a lone batch runs start to end as one synchronous step, without
 * an effect per call.
 *
 * `BlockingIo` is the implementation the file log uses when it may block: Node's synchronous calls
 * by default; `undefined` turns blocking calls off (lone appends then go through `FileSystem` too);
 * tests provide one that records or fails.
 *
 * @since 0.2.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as FileSystem from "effect/FileSystem"
import * as Option from "effect/Option"
import * as PlatformError from "effect/PlatformError"
import * as Result from "effect/Result"
import { existsSync, fdatasyncSync, fsyncSync, ftruncateSync, lstatSync, readlinkSync, readSync, writeSync } from "node:fs"

/**
 * Where a path leads, not following a link: the identity of the file and its size.
 *
 * @since 0.2.0
 * @category models
 */
export interface Identity {
  readonly dev: bigint
  readonly ino: bigint | undefined
  readonly size: bigint
}

/**
 * Whether what is at a path is the file a handle was opened on (`file.stat`).
 *
 * @since 0.2.0
 * @category models
 */
export const isFile = (found: Identity, opened: FileSystem.File.Info): boolean =>
  found.dev === opened.dev && found.ino === Option.getOrUndefined(opened.ino)

/**
 * The calls a batch makes.
 *
 * @since 0.2.0
 * @category models
 */
export interface Io {
  /**
   * Writes all of `bytes` at the end of `file`, which must be open for appending (`a`, `a+`, `ax`): a file
   * opened otherwise keeps its own position, which a blocking write would not follow. `path` names
   * it in errors.
   */
  readonly write: (file: FileSystem.File, path: string, bytes: Uint8Array) => Effect.Effect<void, PlatformError.PlatformError>
  /** Writes all of `bytes` at `position` in `file`, which must not be open for appending. */
  readonly writeAt: (file: FileSystem.File, path: string, bytes: Uint8Array, position: number) => Effect.Effect<void, PlatformError.PlatformError>
  /** Makes what was written to `file` durable (fsync). */
  readonly sync: (file: FileSystem.File, path: string) => Effect.Effect<void, PlatformError.PlatformError>
  /** What is at `path`, without following a link; `undefined` when nothing is. */
  readonly lstat: (path: string) => Effect.Effect<Identity | undefined, PlatformError.PlatformError>
}

/**
 * Blocking calls on a file's descriptor, on the calling thread: each answers once the system call
 * returns, with its failure as a value (`undefined`: done).
 *
 * @since 0.2.0
 * @category models
 */
export interface Blocking {
  /**
   * Writes all of `bytes` at the end of the file open for appending (`a`, `a+`, `ax`) on `fd`: a file
   * opened otherwise keeps its own position, which a blocking write would not follow. `path` names
   * it in errors.
   */
  readonly write: (fd: number, path: string, bytes: Uint8Array) => PlatformError.PlatformError | undefined
  /** Writes all of `bytes` at `position` in the file open on `fd`, which must not be open for appending. */
  readonly writeAt: (fd: number, path: string, bytes: Uint8Array, position: number) => PlatformError.PlatformError | undefined
  /** Makes what was written to the file on `fd` durable (fsync). */
  readonly sync: (fd: number, path: string) => PlatformError.PlatformError | undefined
  /**
   * Makes what was written to the file on `fd` durable, and of its metadata only what reading it
   * back needs (fdatasync: its size, not its times). Over blocks already written, and within the
   * file's size, that flushes the data alone: no journal commit of the file system for the inode.
   */
  readonly datasync: (fd: number, path: string) => PlatformError.PlatformError | undefined
  /** Cuts the file on `fd` to `length` bytes. */
  readonly truncate: (fd: number, path: string, length: number) => PlatformError.PlatformError | undefined
  /** What is at `path`, without following a link; `undefined` when nothing is. */
  readonly lstat: (path: string) => Result.Result<Identity | undefined, PlatformError.PlatformError>
  /**
   * Whether the file open for reading on `fd` is still linked at `path`, exactly as given, and ends
   * at byte `end`, told without a stat: `false` when it can't be told so (no `/proc/self/fd`, a
   * path that isn't canonical) as well as when it isn't so, for `lstat` to say. What it doesn't see,
   * where `lstat` would: a file system mounted over the path (only someone with mount rights can).
   *
   * Why not a stat: it asks for the file's times, and a file whose times were asked for stamps its
   * next write with a fine-grained time (Linux's multigrain timestamps, since 6.13), dirtying its
   * inode on every append. Measured on Linux 6.18: a journal's fdatasync after such a write to a
   * session file costs ~50-80 µs more (ext4, with or without its own journal); the session file's
   * own fsync ~70-100 µs more on ext4 with a journal (no more without one).
   */
  readonly stillAt: (fd: number, path: string, end: number) => boolean
}

/**
 * The blocking calls the file log makes; `undefined` for none.
 *
 * @since 0.2.0
 * @category references
 */
export const BlockingIo = Context.Reference<Blocking | undefined>("effect-todo-write/file/BlockingIo", {
  defaultValue: () => node
})

/** A Node system error as `FileSystem` reports it, so both ways fail alike. */
export const systemError = (method: string, syscall: string, pathOrDescriptor: string) => (cause: unknown) => {
  const code = typeof cause === "object" && cause !== null && "code" in cause ? cause.code : undefined
  return PlatformError.systemError({
    _tag: code === "ENOENT" ? "NotFound" : code === "EACCES" || code === "EPERM" ? "PermissionDenied" : "Unknown",
    module: "FileSystem",
    method,
    pathOrDescriptor,
    syscall,
    cause
  })
}

/**
 * The descriptor of a file opened by Node's `FileSystem`, which keeps it as `fd`; a file without one
 * (another platform's) can't take blocking calls and goes through `FileSystem`.
 *
 * @since 0.2.0
 * @category models
 */
export const descriptorOf = (file: FileSystem.File): number | undefined =>
  "fd" in file && typeof file.fd === "number" ? file.fd : undefined

/** Writes all of `bytes`, at `position` or (`undefined`) at the file's own position. */
const writeAll = (fd: number, path: string, bytes: Uint8Array, position: number | undefined) => {
  let written = 0
  try {
    for (let n = 1; written < bytes.length && n > 0; written += n) {
      n = writeSync(fd, bytes, written, bytes.length - written, position === undefined ? null : position + written)
    }
  } catch (cause) {
    return systemError("writeAll", "write", path)(cause)
  }
  // A write that makes no progress would otherwise spin, holding the thread.
  return written < bytes.length ? systemError("writeAll", "write", path)(new Error("wrote 0 bytes")) : undefined
}

/** Makes a call that answers nothing: `undefined` once done, or its failure. */
const attempt = (method: string, syscall: string, path: string, call: () => void): PlatformError.PlatformError | undefined => {
  try {
    call()
    return undefined
  } catch (cause) {
    return systemError(method, syscall, path)(cause)
  }
}

/** The bytes around a file's expected end: exactly one is read where the file ends there. */
const aroundEnd = new Uint8Array(2)
const deleted = " (deleted)"
/** Whether descriptors can be looked up in `/proc/self/fd` (Linux): asked once. */
let procFds: boolean | undefined

/**
 * Node's synchronous calls.
 *
 * @since 0.2.0
 * @category implementations
 */
export const node: Blocking = {
  write: (fd, path, bytes) => writeAll(fd, path, bytes, undefined),
  writeAt: (fd, path, bytes, position) => writeAll(fd, path, bytes, position),
  sync: (fd, path) => attempt("sync", "fsync", path, () => fsyncSync(fd)),
  datasync: (fd, path) => attempt("sync", "fdatasync", path, () => fdatasyncSync(fd)),
  truncate: (fd, path, length) => attempt("truncate", "ftruncate", path, () => ftruncateSync(fd, length)),
  lstat: (path) => {
    try {
      // Plain numbers first: a bigint stat allocates a BigInt for each of its 18 fields.
      const info = lstatSync(path, { throwIfNoEntry: false })
      if (info === undefined) return Result.succeed(undefined)
      const exact = fromNumbers(info)
      if (exact !== undefined) return Result.succeed(exact)
      const big = lstatSync(path, { bigint: true, throwIfNoEntry: false })
      // Node's bigint stats are signed 64-bit; FileSystem's are unsigned, as device and inode numbers are.
      return Result.succeed(
        big === undefined ? undefined : { dev: BigInt.asUintN(64, big.dev), ino: BigInt.asUintN(64, big.ino), size: big.size }
      )
    } catch (cause) {
      return Result.fail(systemError("lstat", "lstat", path)(cause))
    }
  },
  stillAt: (fd, path, end) => {
    // Where the descriptor's file is now, " (deleted)" appended once it is unlinked: a path ending so
    // can't be told from that. Then its last byte.
    if (end <= 0 || path.endsWith(deleted) || (procFds ??= existsSync("/proc/self/fd")) === false) return false
    try {
      return readlinkSync(`/proc/self/fd/${fd}`) === path && readSync(fd, aroundEnd, 0, 2, end - 1) === 1
    } catch {
      return false
    }
  }
}

/**
 * The identity in a stat of plain numbers, if they are exact: a device or inode number of 2^53 or
 * more may have been rounded (to one of 2^53 or more), so it says nothing; take a bigint stat then.
 *
 * @since 0.2.0
 * @category implementations
 */
export const fromNumbers = (info: { readonly dev: number; readonly ino: number; readonly size: number }): Identity | undefined =>
  info.dev <= Number.MAX_SAFE_INTEGER && info.ino <= Number.MAX_SAFE_INTEGER && info.size <= Number.MAX_SAFE_INTEGER
    ? { dev: BigInt(info.dev), ino: BigInt(info.ino), size: BigInt(info.size) }
    : undefined

const done = (error: PlatformError.PlatformError | undefined): Effect.Effect<void, PlatformError.PlatformError> =>
  error === undefined ? Effect.void : Effect.fail(error)

/**
 * Blocking calls as an `Io`, made in place when the effect runs; a file without a descriptor goes
 * through `pooled`.
 *
 * @since 0.2.0
 * @category implementations
 */
export const inPlace = (blocking: Blocking, pooled: Io): Io => ({
  write: (file, path, bytes) => {
    const fd = descriptorOf(file)
    return fd === undefined ? pooled.write(file, path, bytes) : Effect.suspend(() => done(blocking.write(fd, path, bytes)))
  },
  writeAt: (file, path, bytes, position) => {
    const fd = descriptorOf(file)
    return fd === undefined
      ? pooled.writeAt(file, path, bytes, position)
      : Effect.suspend(() => done(blocking.writeAt(fd, path, bytes, position)))
  },
  sync: (file, path) => {
    const fd = descriptorOf(file)
    return fd === undefined ? pooled.sync(file, path) : Effect.suspend(() => done(blocking.sync(fd, path)))
  },
  lstat: (path) => Effect.suspend(() => Effect.fromResult(blocking.lstat(path)))
})

/**
 * The same calls through `FileSystem`: each a round trip through the thread pool.
 *
 * @since 0.2.0
 * @category implementations
 */
export const fromFileSystem = (fs: FileSystem.FileSystem): Io => ({
  write: (file, _path, bytes) => file.writeAll(bytes),
  writeAt: (file, _path, bytes, position) => Effect.andThen(file.seek(BigInt(position), "start"), file.writeAll(bytes)),
  sync: (file) => file.sync,
  lstat: (path) =>
    fs.lstat(path).pipe(
      Effect.map((info): Identity | undefined => ({
        dev: info.dev,
        ino: Option.getOrUndefined(info.ino),
        size: BigInt(info.size)
      })),
      Effect.catchReason("PlatformError", "NotFound", () => Effect.succeed(undefined))
    )
})

/**
 * The calls batches make. Writes and lstats meet the page cache, not the disk: they are made in
 * place wherever blocking calls are available, sparing a thread-pool round trip each. An fsync
 * waits for the disk: it blocks only for a lone batch, which makes all its calls through `alone`.
 * Unless `mayBlock`, there is no `alone`, and every call goes through the thread pool.
 *
 * @since 0.2.0
 * @category implementations
 */
export const choose = (
  fs: FileSystem.FileSystem,
  blocking: Blocking | undefined,
  mayBlock: boolean
): { readonly alone: Blocking | undefined; readonly shared: Io } => {
  const pooled = fromFileSystem(fs)
  if (blocking === undefined || !mayBlock) return { alone: undefined, shared: pooled }
  return { alone: blocking, shared: { ...inPlace(blocking, pooled), sync: pooled.sync } }
}
