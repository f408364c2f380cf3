/**
 * A `FileSystem` that wraps the real one (`NodeServices`), with the blocking calls a lone batch makes
 * (`BlockingIo`), and records, in order, what reaches the disk: every write, sync and truncate of an open file (with the file's path), every rename, remove,
 * file write and directory creation, and every byte read through an open file or a stream. A test
 * may add its own events (an acknowledgement, say) to the same log, so that "A happened before B"
 * becomes an assertion on indices.
 *
 * Events are recorded when the operation COMPLETES: a sync that has begun but not returned made
 * nothing durable yet.
 */
import { NodeServices } from "@effect/platform-node"
import { Effect, FileSystem, Layer, type PlatformError, Stream } from "effect"
import * as fs from "node:fs"
import { basename, resolve } from "node:path"
import * as BlockingIo from "../../../src/log/file/BlockingIo.ts"
import type * as IoCalls from "../../../src/log/file/IoCalls.ts"
import * as IoThread from "../../../src/log/file/IoThread.ts"

/** One recorded operation. `entries` lists the (session, seq) of every event line a write carried. */
export interface Event {
  readonly path: string
  readonly op:
    | "open"
    | "writeAll"
    | "sync"
    | "truncate"
    | "readAlloc"
    | "stream"
    | "readFile"
    | "rename"
    | "remove"
    | "writeFile"
    | "makeDirectory"
    | "ack"
    | "mark"
  readonly flag?: string | undefined
  readonly bytes?: number | undefined
  readonly entries?: ReadonlyArray<{ readonly session: string; readonly seq: number }> | undefined
  readonly seq?: number | undefined
  /** Where a stream started reading, where a `readAlloc` read from, or where a positioned write wrote. */
  readonly offset?: number | undefined
  /** How many bytes a `readAlloc` asked for (a probe asks for a few KiB, a scan for whole chunks). */
  readonly requested?: number | undefined
  /** Made with a blocking call on the calling thread (`BlockingIo`), not through `FileSystem`. */
  readonly blocking?: boolean | undefined
  /** Made by the journal's I/O thread's code (`IoCalls`; here in place, as given `ThreadCalls`). */
  readonly thread?: boolean | undefined
}

const decoder = new TextDecoder()

/**
 * The (session, seq) pairs of the event lines in bytes written to `path`: a session file's lines
 * name their seq (the session is the file's name); a journal's batches are introduced by a record
 * header naming the session.
 */
export const entriesOf = (path: string, bytes: Uint8Array) => {
  const entries: Array<{ session: string; seq: number }> = []
  // Only session files and journals hold event lines (a lock file holds its owner, not JSON).
  if (!path.endsWith(".jsonl") && !path.endsWith(".wal")) return entries
  let session = basename(path).replace(/\.jsonl$/, "")
  for (const line of decoder.decode(bytes).split("\n")) {
    // Empty, or zeros a journal is written ahead with.
    if (/^\0*$/.test(line)) continue
    const json = JSON.parse(line)
    if (typeof json.session === "string" && typeof json.offset === "number") session = json.session
    else if (typeof json.seq === "number" && typeof json.type === "string") entries.push({ session, seq: json.seq })
  }
  return entries
}

/** A recorder: its event log, a way to add events, and the FileSystem layer that fills it. */
export const make = () => {
  const events: Array<Event> = []
  // The path each descriptor was opened at, for the I/O thread's calls, which take descriptors.
  const paths = new Map<number, string>()
  const record = (event: Event) => {
    events.push({ ...event, path: resolve(event.path) })
  }
  /** Runs `effect`, then records `event` (only if it succeeded). */
  const after = <A, E, R>(effect: Effect.Effect<A, E, R>, event: Event) =>
    Effect.tap(effect, () => Effect.sync(() => record(event)))

  const wrapFile = (path: string, file: FileSystem.File): FileSystem.File =>
    Object.create(file, {
      sync: { get: () => after(file.sync, { path, op: "sync" }) },
      writeAll: {
        value: (bytes: Uint8Array) =>
          after(file.writeAll(bytes), { path, op: "writeAll", bytes: bytes.length, entries: entriesOf(path, bytes) })
      },
      truncate: { value: (length?: number) => after(file.truncate(length), { path, op: "truncate", bytes: length }) },
      // The wrapped file's own position, which its `writeAll` writes at.
      seek: { value: (offset: bigint, from: FileSystem.SeekMode) => file.seek(offset, from) },
      readAlloc: {
        value: (size: number, options?: FileSystem.File.ReadOptions) =>
          Effect.tap(file.readAlloc(size, options), (read) =>
            Effect.sync(() =>
              record({
                path,
                op: "readAlloc",
                bytes: read._tag === "Some" ? read.value.length : 0,
                offset: Number(options?.position ?? 0),
                requested: size
              })
            ))
      }
    })

  const layer = Layer.effect(
    FileSystem.FileSystem,
    Effect.map(FileSystem.FileSystem, (real) =>
      FileSystem.FileSystem.of({
        ...real,
        open: (path, options) =>
          Effect.map(
            after(real.open(path, options), { path, op: "open", flag: options?.flag }),
            (file) => {
              const fd = BlockingIo.descriptorOf(file)
              if (fd !== undefined) paths.set(fd, path)
              return wrapFile(path, file)
            }
          ),
        stream: (path, options) => {
          const offset = options?.offset
          // The reader passes byte offsets as numbers.
          const from = offset === undefined ? 0 : typeof offset === "number" ? offset : undefined
          return real.stream(path, options).pipe(
            Stream.tap((chunk) => Effect.sync(() => record({ path, op: "stream", bytes: chunk.length, offset: from })))
          )
        },
        readFile: (path) => Effect.tap(real.readFile(path), (bytes) => Effect.sync(() => record({ path, op: "readFile", bytes: bytes.length }))),
        truncate: (path, length) => after(real.truncate(path, length), { path, op: "truncate", bytes: length }),
        rename: (from, to) => after(real.rename(from, to), { path: from, op: "rename", flag: resolve(to) }),
        remove: (path, options) => after(real.remove(path, options), { path, op: "remove" }),
        writeFile: (path, data, options) => after(real.writeFile(path, data, options), { path, op: "writeFile" }),
        writeFileString: (path, data, options) =>
          after(real.writeFileString(path, data, options), { path, op: "writeFile" }),
        makeDirectory: (path, options) => after(real.makeDirectory(path, options), { path, op: "makeDirectory" })
      })
    )
  ).pipe(Layer.provide(NodeServices.layer))

  // The blocking calls a lone batch makes, recorded like the others: they reach the same disk.
  const recorded = (error: PlatformError.PlatformError | undefined, event: Event) => {
    if (error === undefined) record(event)
    return error
  }
  const blockingIo: BlockingIo.Blocking = {
    write: (fd, path, bytes) =>
      recorded(BlockingIo.node.write(fd, path, bytes), {
        path,
        op: "writeAll",
        bytes: bytes.length,
        entries: entriesOf(path, bytes),
        blocking: true
      }),
    writeAt: (fd, path, bytes, position) =>
      recorded(BlockingIo.node.writeAt(fd, path, bytes, position), {
        path,
        op: "writeAll",
        bytes: bytes.length,
        offset: position,
        entries: entriesOf(path, bytes),
        blocking: true
      }),
    sync: (fd, path) => recorded(BlockingIo.node.sync(fd, path), { path, op: "sync", blocking: true }),
    // As durable for the data written as an fsync: recorded as a sync, marked.
    datasync: (fd, path) => recorded(BlockingIo.node.datasync(fd, path), { path, op: "sync", flag: "datasync", blocking: true }),
    truncate: (fd, path, length) =>
      recorded(BlockingIo.node.truncate(fd, path, length), { path, op: "truncate", bytes: length, blocking: true }),
    lstat: BlockingIo.node.lstat,
    stillAt: BlockingIo.node.stillAt
  }

  // The journal's I/O thread's calls, recorded when they return (here made in place: see `IoThread.ThreadCalls`).
  const pathOf = (fd: number) => paths.get(fd) ?? `fd ${fd}`
  const threadCalls: IoCalls.Calls = {
    lstatSync: (path, options) => fs.lstatSync(path, options),
    statSync: (path, options) => fs.statSync(path, options),
    opendirSync: (path) => fs.opendirSync(path),
    writeSync: (fd, buffer, offset, length, position) => {
      const written = fs.writeSync(fd, buffer, offset, length, position)
      const bytes = buffer.subarray(offset, offset + written)
      record({ path: pathOf(fd), op: "writeAll", bytes: written, entries: entriesOf(pathOf(fd), bytes), thread: true })
      return written
    },
    writevSync: (fd, buffers, position) => {
      const written = fs.writevSync(fd, buffers, position)
      const bytes = Buffer.concat(buffers).subarray(0, written)
      record({ path: pathOf(fd), op: "writeAll", bytes: written, offset: position, entries: entriesOf(pathOf(fd), bytes), thread: true })
      return written
    },
    fdatasyncSync: (fd) => {
      fs.fdatasyncSync(fd)
      record({ path: pathOf(fd), op: "sync", flag: "datasync", thread: true })
    },
    fsyncSync: (fd) => {
      fs.fsyncSync(fd)
      record({ path: pathOf(fd), op: "sync", thread: true })
    },
    ftruncateSync: (fd, length) => {
      fs.ftruncateSync(fd, length)
      record({ path: pathOf(fd), op: "truncate", bytes: length, thread: true })
    }
  }

  return {
    events,
    record,
    layer: Layer.mergeAll(layer, Layer.succeed(BlockingIo.BlockingIo, blockingIo), Layer.succeed(IoThread.ThreadCalls, threadCalls))
  }
}
