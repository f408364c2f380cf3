/**
 * Commits other processes make to a directory of session files, as announcements `{ session, seq }`
 * for the log core, which reads what each announces and publishes it to subscribers, each entry once.
 *
 * A watch on the directory (`FileSystem.watch`: one descriptor for the directory, not one per
 * session) says which file changed; a poll of the files' sizes catches what the watch misses, and
 * replaces it where it can't be installed. For a changed file only the bytes after the last complete
 * line seen are read, and only the last complete line of them is parsed, for its seq: bytes after the
 * last newline are a torn tail (a writer mid-write, or one that crashed there), never announced. When
 * the next writer cuts that tail and appends, the file grows from the same line boundary and its new
 * lines are announced in turn. Every line is sealed with a checksum, so a read that races a repair
 * and sees a mix of old and new bytes fails the check and is retried, never announced.
 */
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as FileSystem from "effect/FileSystem"
import type * as Path from "effect/Path"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as SessionEvent from "../SessionEvent.ts"
import * as SessionId from "../SessionId.ts"
import type * as SessionLog from "../SessionLog.ts"
import * as Format from "./Format.ts"
import * as RegularFile from "./RegularFile.ts"
import * as Scanner from "./Scanner.ts"

/** How often files are polled: with a working watch, as a safety net; without one, as the source. */
export interface Options {
  /** The longest line a session file holds (the log's `maxLineBytes`). */
  readonly maxLineBytes: number
  /** The poll's period while the watch works. Default 1 second. */
  readonly pollInterval?: Duration.Input | undefined
  /** The poll's period where the watch can't be installed or ends. Default 200 ms. */
  readonly fallbackPollInterval?: Duration.Input | undefined
}

/** What the core reads: the session, the last seq committed, and the first seq committed since the last look. */
export type Announcement = SessionLog.Announcement

/** What is known of one session file: where its last complete line ends, and that line's seq. */
interface Tracked {
  offset: number
  /** The last committed seq seen; -1 while the file holds only its header (or nothing). */
  seq: number
  size: number
  mtime: number
  /** The first seq announced since the watch began; -1 before any. */
  first: number
}

/** Probes start small (most lines are short) and grow for long lines, up to the longest line the log holds. */
const probeBytes = 4 * 1024

/**
 * New bytes up to this many are read whole, and every line in them parsed: the announcement then
 * carries the entries, and the core need not read the session again. Past it, only the last line
 * is read, for its seq, and the core reads what it announces.
 */
const forwardBytes = 256 * 1024

/**
 * What a look at a file's tail found: its last complete line (with, read forward, every entry after
 * the last line seen), no new one, or nothing certain yet.
 */
type Tail =
  | { readonly end: number; readonly seq: number; readonly entries?: ReadonlyArray<SessionEvent.Entry> }
  | "nothing new"
  | "look again"

/**
 * The complete lines of an open file of `size` bytes after `from` (a line boundary, after the line
 * of seq `seq`), each parsed and checked (seqs on from `seq`): their end, the last seq and the
 * entries; `undefined` if they don't read as that (damage, a file that changed under the read):
 * the last line alone then says where the file ends.
 */
const forward = Effect.fnUntraced(function*(
  handle: FileSystem.File,
  size: number,
  session: string,
  from: number,
  seq: number,
  maxLineBytes: number
) {
  const read = yield* handle.readAlloc(size - from, { position: BigInt(from) })
  if (read._tag === "None") return undefined
  const newline = read.value.lastIndexOf(10)
  if (newline === -1) return undefined
  const scanner = Scanner.scanner(session, from === 0 ? Scanner.start : { offset: from, line: 0, seq: seq + 1 }, maxLineBytes)
  const [, items] = scanner.step(scanner.initial(), read.value.subarray(0, newline + 1))
  const entries: Array<SessionEvent.Entry> = []
  for (const item of items) {
    if (item._tag === "Entry") entries.push(item.entry)
    else if (item._tag !== "Header") return undefined
  }
  return { end: from + newline + 1, seq: entries.at(-1)?.seq ?? seq, entries } satisfies Tail
})

/** The last complete line of an open file of `size` bytes after `from` (a line boundary): its end and seq. */
const lastLine = Effect.fnUntraced(function*(
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
    const scanner = Scanner.scanner(session, lineStart === 0 ? Scanner.start : { offset: lineStart, line: 0, seq: -1 })
    const [, items] = scanner.step(scanner.initial(), bytes.subarray(previous + 1, newline + 1))
    const item = items[0]
    if (item?._tag === "Header") return { end: start + newline + 1, seq: -1 } satisfies Tail
    if (item?._tag === "Entry") return { end: start + newline + 1, seq: item.entry.seq } satisfies Tail
    return "look again" satisfies Tail // damage, or a read that raced a repair
  }
})

/**
 * Starts watching `directory` and answers the announcements, from now on, of commits made by others
 * to sessions `owned` doesn't claim (a session this process holds the lock of has no other writer).
 * The files' current ends are read before it answers, so what is committed after it answers is
 * announced. The watch and the poll live as long as the scope.
 */
export const make = Effect.fnUntraced(function*(
  fs: FileSystem.FileSystem,
  path: Path.Path,
  directory: string,
  options: Options & { readonly owned: (session: SessionId.SessionId) => boolean }
): Effect.fn.Return<Stream.Stream<Announcement>, never, Scope.Scope> {
  const tracked = new Map<SessionId.SessionId, Tracked>()
  const dirty = new Set<string>()
  let sweep = false
  const wake = yield* Queue.sliding<void>(1)
  const signal = () => {
    Queue.offerUnsafe(wake, undefined)
  }

  const sessionOf = (name: string): SessionId.SessionId | undefined => {
    if (!name.endsWith(Format.extension)) return undefined
    const session = name.slice(0, -Format.extension.length)
    return SessionId.is(session) ? session : undefined
  }

  /**
   * Looks at one session file; answers what to announce. A poll skips a file whose size and mtime
   * are as last seen; the watch naming a file, or the first look, reads its tail regardless.
   */
  const check = (session: SessionId.SessionId, look: "first" | "event" | "poll") =>
    Effect.gen(function*() {
      if (options.owned(session)) return []
      const file = path.join(directory, Format.fileName(session))
      const mtimeOf = (info: FileSystem.File.Info) => info.mtime._tag === "Some" ? info.mtime.value.getTime() : 0
      if (look === "poll") {
        // A file whose size and mtime are as last seen is not opened.
        const info = yield* fs.lstat(file)
        const seen = tracked.get(session)
        if (info.type !== "File" || (seen !== undefined && Number(info.size) === seen.size && mtimeOf(info) === seen.mtime)) return []
      }
      return yield* Effect.scoped(Effect.gen(function*() {
        // Never through a link, never a FIFO or device: the watch reads only what the log itself would.
        const handle = yield* RegularFile.open(fs, file, "r")
        const info = yield* handle.stat
        const size = Number(info.size)
        let known = tracked.get(session)
        if (known === undefined || size < known.offset) {
          // New since the watch began (every line of it is news), or replaced by a shorter file.
          known = { offset: 0, seq: -1, size: -1, mtime: -1, first: known?.first ?? -1 }
          tracked.set(session, known)
        }
        known.size = size
        known.mtime = mtimeOf(info)
        const before = known.seq
        // The first look only learns where the file ends; later ones read what is new, whole if it is short.
        const read = look !== "first" && size > known.offset && size - known.offset <= forwardBytes
          ? yield* forward(handle, size, session, known.offset, before, options.maxLineBytes)
          : undefined
        const last: Tail = read ?? (yield* lastLine(handle, size, session, known.offset, options.maxLineBytes))
        if (last === "look again") known.size = -1 // even if nothing changes before the next poll
        if (typeof last === "string") return []
        known.offset = last.end
        known.seq = last.seq
        if (look === "first" || last.seq <= before) return []
        if (known.first < 0) known.first = before + 1
        // The first new seq too: the core reads from the last seq it published, or else from that one;
        // with the entries, when they were read, it reads nothing.
        return [{ session, seq: last.seq, first: before + 1, ...(last.entries === undefined ? {} : { entries: last.entries }) }]
      }))
    }).pipe(
      Effect.catch((error) =>
        error._tag === "PlatformError" && error.reason._tag === "NotFound"
          ? Effect.sync(() => {
            tracked.delete(session)
            return []
          })
          : Effect.as(Effect.logDebug(`SessionLogFile watch: can't look at ${session}: ${error._tag === "PlatformError" ? error.message : error.detail}`), [])
      )
    )

  const listed = Effect.map(
    Effect.orElseSucceed(fs.readDirectory(directory), () => []),
    (names) => names.flatMap((name) => sessionOf(name) ?? [])
  )

  /** Everything marked since the last drain: the files named by the watch, and all of them on a poll. */
  const drain = Effect.gen(function*() {
    const named = new Set<SessionId.SessionId>()
    for (const name of dirty) {
      const session = sessionOf(path.basename(name))
      if (session !== undefined) named.add(session)
    }
    dirty.clear()
    const swept = sweep
    sweep = false
    const polled = new Set<SessionId.SessionId>()
    if (swept) {
      for (const session of [...(yield* listed), ...tracked.keys()]) if (!named.has(session)) polled.add(session)
    }
    const out: Array<Announcement> = []
    for (const session of named) out.push(...(yield* check(session, "event")))
    for (const session of polled) out.push(...(yield* check(session, "poll")))
    if (swept) {
      // Again each session's announcement, its first seq and its last: free for the core when it
      // published them, and a second chance when one of its reads failed (it raced a repair, say).
      for (const [session, known] of tracked) {
        if (known.first >= 0 && known.seq >= known.first) out.push({ session, seq: known.seq, first: known.first })
      }
    }
    return out
  })

  // The watch first, then the files' current ends: a change in between is seen by both, harmlessly.
  const installed = yield* Deferred.make<boolean>()
  let watching = true
  yield* fs.watch(directory, { onReady: () => Deferred.doneUnsafe(installed, Exit.succeed(true)) }).pipe(
    Stream.runForEach((event) =>
      Effect.sync(() => {
        dirty.add(event.path)
        signal()
      })
    ),
    Effect.catchCause((cause) =>
      Effect.logWarning(`SessionLogFile watch: can't watch ${directory}; polling its files instead`, cause)
    ),
    Effect.ensuring(Effect.suspend(() => {
      watching = false
      return Deferred.succeed(installed, false)
    })),
    Effect.forkScoped
  )
  yield* Deferred.await(installed)
  for (const session of yield* listed) yield* check(session, "first")

  const pollInterval = options.pollInterval ?? Duration.seconds(1)
  const fallbackPollInterval = options.fallbackPollInterval ?? Duration.millis(200)
  yield* Effect.suspend(() => Effect.sleep(watching ? pollInterval : fallbackPollInterval)).pipe(
    Effect.andThen(Effect.sync(() => {
      sweep = true
      signal()
    })),
    Effect.forever,
    Effect.forkScoped
  )

  return Stream.fromQueue(wake).pipe(Stream.mapEffect(() => drain), Stream.flattenIterable)
})
