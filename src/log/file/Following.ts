/**
 * Reading what another process appended to a session file, for the watch (`Watcher`): every
 * complete line after the last one seen, parsed, when they are few; past that, only the last one,
 * for its seq. Bytes after the last newline are a torn tail (a writer mid-write, or one that crashed
 * there), never read as a line. Every line is sealed with a checksum, so a read that races a repair
 * and sees a mix of old and new bytes fails the check and is looked at again, never announced.
 *
 * A file that keeps changing is read through a handle kept open (`Kept`), from where its last line
 * seen ends, without asking its size: one read, no open, no stat. A stat would cost the writer too:
 * a file whose times were asked for stamps its next write with a fine-grained time (Linux's
 * multigrain timestamps), which makes that append dearer to sync (see `BlockingIo.Blocking.stillAt`).
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as FileSystem from "effect/FileSystem"
import type * as PlatformError from "effect/PlatformError"
import * as Scope from "effect/Scope"
import type * as SessionEvent from "../SessionEvent.ts"
import type * as SessionId from "../SessionId.ts"
import type { UnsafePath } from "../SessionLogError.ts"
import * as RegularFile from "./RegularFile.ts"
import * as Scanner from "./Scanner.ts"

/** Probes start small (most lines are short) and grow for long lines, up to the longest line the log holds. */
const probeBytes = 4 * 1024

/**
 * New bytes up to this many are read whole, and every line in them parsed: the announcement then
 * carries the entries, and the core need not read the session again. Past it, only the last line
 * is read, for its seq, and the core reads what it announces.
 */
export const forwardBytes = 256 * 1024

/**
 * What a look at a file's tail found: its last complete line (with, read forward, every entry after
 * the last line seen), no new one, or nothing certain yet.
 */
export type Tail =
  | { readonly end: number; readonly seq: number; readonly entries?: ReadonlyArray<SessionEvent.Entry> }
  | "nothing new"
  | "look again"

/**
 * The complete lines in `bytes`, read at `from` (a line boundary, after the line of seq `seq`),
 * each parsed and checked (seqs on from `seq`): their end, the last seq and the entries; "nothing
 * new" without a complete line; `undefined` if they don't read as that (damage, a file that changed
 * under the read, or read from inside a line of a file that replaced the one seen).
 */
const linesIn = (bytes: Uint8Array, session: string, from: number, seq: number, maxLineBytes: number): Tail | undefined => {
  const newline = bytes.lastIndexOf(10)
  if (newline === -1) return bytes.length > maxLineBytes ? undefined : "nothing new"
  const scanner = Scanner.scanner(session, from === 0 ? Scanner.start : { offset: from, line: 0, seq: seq + 1 }, maxLineBytes)
  const [, items] = scanner.step(scanner.initial(), bytes.subarray(0, newline + 1))
  const entries: Array<SessionEvent.Entry> = []
  for (const item of items) {
    if (item._tag === "Entry") entries.push(item.entry)
    else if (item._tag !== "Header") return undefined
  }
  return { end: from + newline + 1, seq: entries.at(-1)?.seq ?? seq, entries }
}

/** The complete lines of an open file of `size` bytes after `from`, read whole (see `linesIn`). */
export const forward = Effect.fnUntraced(function*(
  handle: FileSystem.File,
  size: number,
  session: string,
  from: number,
  seq: number,
  maxLineBytes: number
) {
  const read = yield* handle.readAlloc(size - from, { position: BigInt(from) })
  return read._tag === "None" ? undefined : linesIn(read.value, session, from, seq, maxLineBytes)
})

/**
 * The same, for a file whose size is not asked: up to `forwardBytes` after `from`, read into
 * `scratch` (one longer, so that a read filling it says there is more); "too much" past that.
 * The entries are parsed anew, so `scratch` is free again once this answers.
 */
export const forwardUnsized = Effect.fnUntraced(function*(
  handle: FileSystem.File,
  scratch: Uint8Array,
  session: string,
  from: number,
  seq: number,
  maxLineBytes: number
) {
  const read = yield* handle.read(scratch, { position: BigInt(from) })
  if (read > forwardBytes) return "too much" as const
  return linesIn(scratch.subarray(0, read), session, from, seq, maxLineBytes)
})

/** A buffer for `forwardUnsized`. */
export const makeScratch = () => new Uint8Array(forwardBytes + 1)

/** The last complete line of an open file of `size` bytes after `from` (a line boundary): its end and seq. */
export const lastLine = Effect.fnUntraced(function*(
  handle: FileSystem.File,
  size: number,
  session: string,
  from: number,
  maxLineBytes: number
) {
  // The last window holds a line as long as the log allows and the newline before it.
  const widest = maxLineBytes + 1
  for (let window = Math.min(probeBytes, widest); ; window = Math.min(window * 8, widest)) {
    const start = Math.max(from, size - window)
    if (start >= size) return "nothing new" satisfies Tail
    const read = yield* handle.readAlloc(size - start, { position: BigInt(start) })
    if (read._tag === "None") return "look again" satisfies Tail
    const bytes = read.value
    const newline = bytes.lastIndexOf(10)
    if (newline === -1) {
      if (start === from) return "nothing new" satisfies Tail // only a torn tail after the last line seen
      if (window === widest) return "look again" satisfies Tail // a tail longer than any line: damage
      continue
    }
    const previous = newline === 0 ? -1 : bytes.lastIndexOf(10, newline - 1)
    // The line must begin inside the window, or at a line boundary already known.
    if (previous === -1 && start !== from) {
      if (window === widest) return "look again" satisfies Tail // a line longer than the log allows
      continue
    }
    const lineStart = start + previous + 1
    const scanner = Scanner.scanner(session, lineStart === 0 ? Scanner.start : { offset: lineStart, line: 0, seq: -1 }, maxLineBytes)
    const [, items] = scanner.step(scanner.initial(), bytes.subarray(previous + 1, newline + 1))
    const item = items[0]
    if (item?._tag === "Header") return { end: start + newline + 1, seq: -1 } satisfies Tail
    if (item?._tag === "Entry") return { end: start + newline + 1, seq: item.entry.seq } satisfies Tail
    return "look again" satisfies Tail // damage, or a read that raced a repair
  }
})

/** A session file kept open while it changes, and what it was when opened. */
export interface Handle {
  readonly file: FileSystem.File
  readonly info: FileSystem.File.Info
}

/**
 * The session files that changed most recently, kept open, at most `capacity` of them (the least
 * recently read is closed to make room). They live, and are closed, with `scope`.
 */
export const makeKept = Effect.fnUntraced(function*(fs: FileSystem.FileSystem, capacity: number) {
  const outer = yield* Effect.scope
  // In the order they were last used: a Map iterates in insertion order.
  const open = new Map<SessionId.SessionId, Handle & { readonly scope: Scope.Closeable }>()

  const release = (session: SessionId.SessionId): Effect.Effect<void> =>
    Effect.suspend(() => {
      const held = open.get(session)
      if (held === undefined) return Effect.void
      open.delete(session)
      return Scope.close(held.scope, Exit.void)
    })

  /** The handle kept for `session`, if any, now the most recently used. */
  const get = (session: SessionId.SessionId): Handle | undefined => {
    const held = open.get(session)
    if (held !== undefined) {
      open.delete(session)
      open.set(session, held)
    }
    return held
  }

  /** Opens the session file at `path` (never through a link) and keeps it. */
  const acquire = (session: SessionId.SessionId, path: string): Effect.Effect<Handle, UnsafePath | PlatformError.PlatformError> =>
    Effect.gen(function*() {
      yield* release(session)
      const oldest = open.size >= capacity ? open.keys().next() : undefined
      if (oldest !== undefined && oldest.done !== true) yield* release(oldest.value)
      const scope = yield* Scope.fork(outer)
      const opened = yield* Effect.onError(
        Scope.provide(RegularFile.opened(fs, path, "r"), scope),
        () => Scope.close(scope, Exit.void)
      )
      open.set(session, { ...opened, scope })
      return opened
    })

  return { get, acquire, release }
})

/** Kept open session files (see `makeKept`). */
export type Kept = Effect.Success<ReturnType<typeof makeKept>>
