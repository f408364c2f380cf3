/**
 * Commits other processes make to a directory of session files, as announcements `{ session, seq }`
 * for the log core, which reads what each announces and publishes it to subscribers, each entry once.
 *
 * A watch on the directory (`FileSystem.watch`: one descriptor for the directory, not one per
 * session) says which file changed; a poll of the files (an `lstat` each) catches what the watch
 * misses, and replaces it where it can't be installed. For a changed file only the bytes after the
 * last complete line seen are read (see `Following`), through a handle kept open while the file keeps
 * changing: hearing of a commit costs a read, not an open and a stat. Whether the path still names
 * the file kept open, the watch's renames and the poll tell. When the next writer cuts a torn tail and
 * appends, the file grows from the same line boundary and its new lines are announced in turn.
 *
 * What a watch can't tell is whether another process's complete lines are durable yet: it reads
 * them as it hears of them. So a line already written, but not yet acknowledged, when the watch
 * begins counts as written before `subscribe` returned, and is not announced (subscribe, then read
 * what the session holds, as `ProjectionStore.changes` does, to see everything); and a line whose
 * fsync then fails, and which its writer cuts, may have been announced. A session file deleted and
 * written anew (by hand: a writer never does) is followed from the seq after the last one announced.
 */
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as FileSystem from "effect/FileSystem"
import * as Option from "effect/Option"
import type * as Path from "effect/Path"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as SessionId from "../SessionId.ts"
import type * as SessionLog from "../SessionLog.ts"
import * as Following from "./Following.ts"
import * as Format from "./Format.ts"
import * as RegularFile from "./RegularFile.ts"

/** How often files are polled: with a working watch, as a safety net; without one, as the source. */
export interface Options {
  /** The longest line a session file holds (the log's `maxLineBytes`). */
  readonly maxLineBytes: number
  /** The poll's period while the watch works. Default 1 second. */
  readonly pollInterval?: Duration.Input | undefined
  /** The poll's period where the watch can't be installed or ends. Default 200 ms. */
  readonly fallbackPollInterval?: Duration.Input | undefined
  /** How many changing session files stay open at once (see `Following.makeKept`). Default 64. */
  readonly keptFiles?: number | undefined
}

/** What the core reads: the session, the last seq committed, and the first seq committed since the last look. */
export type Announcement = SessionLog.Announcement

/** What is known of one session file: where its last complete line ends, and that line's seq. */
interface Tracked {
  offset: number
  /** The last committed seq seen; -1 while the file holds only its header (or nothing). */
  seq: number
  /** Its size and mtime when last asked (by an open or a poll), -1 for "look again": a poll finding them so looks no further. */
  size: number
  mtime: number
  /** The file last opened at its path: a poll finding another there opens that one. */
  dev: bigint
  ino: bigint | undefined
  /** The first seq announced since the watch began; -1 before any. */
  first: number
}

/** Why a file is looked at: the watch's first look, a change or rename the watch heard of, or the poll. */
type Look = "first" | "changed" | "renamed" | "poll"

/** How long a change heard of waits before it is read (see the drain, in `make`). */
const settle = Duration.millis(5)

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
  // The names the watch heard of since the last drain, and whether one was renamed (created, removed).
  const dirty = new Map<SessionId.SessionId, boolean>()
  const kept = yield* Following.makeKept(fs, options.keptFiles ?? 64)
  const scratch = Following.makeScratch()
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

  const mtimeOf = (info: FileSystem.File.Info) => info.mtime._tag === "Some" ? info.mtime.value.getTime() : 0
  const sameFile = (info: FileSystem.File.Info, known: Tracked) =>
    info.dev === known.dev && Option.getOrUndefined(info.ino) === known.ino

  /**
   * What follows the last line seen of `handle`'s file; `stat`: its size and mtime, if asked. A file
   * kept open is read without asking (see `Following`), unless it holds more than is read whole, or
   * what follows doesn't read as lines.
   */
  const tailOf = (session: SessionId.SessionId, handle: FileSystem.File, stat: FileSystem.File.Info | undefined, look: Look) =>
    Effect.gen(function*() {
      let known = tracked.get(session)
      if (stat === undefined && known !== undefined) {
        const read = yield* Following.forwardUnsized(handle, scratch, session, known.offset, known.seq, options.maxLineBytes)
        if (read !== undefined && read !== "too much") return { known, before: known.seq, tail: read }
      }
      const info = stat ?? (yield* handle.stat)
      const size = Number(info.size)
      if (known === undefined || size < known.offset) {
        // New since the watch began (every line of it is news), or replaced by a shorter file.
        known = { offset: 0, seq: -1, size: -1, mtime: -1, dev: info.dev, ino: undefined, first: known?.first ?? -1 }
        tracked.set(session, known)
      }
      known.size = size
      known.mtime = mtimeOf(info)
      const before = known.seq
      // The first look only learns where the file ends; later ones read what is new, whole if it is short.
      const read = look !== "first" && size > known.offset && size - known.offset <= Following.forwardBytes
        ? yield* Following.forward(handle, size, session, known.offset, before, options.maxLineBytes)
        : undefined
      const tail: Following.Tail = read ?? (yield* Following.lastLine(handle, size, session, known.offset, options.maxLineBytes))
      return { known, before, tail }
    })

  /** Opens the session file at `file`: kept open unless this is the first look; its tail. */
  const opened = (session: SessionId.SessionId, file: string, look: Look) =>
    Effect.gen(function*() {
      const { file: handle, info } = look === "first"
        ? yield* RegularFile.opened(fs, file, "r")
        : yield* kept.acquire(session, file)
      const found = yield* tailOf(session, handle, info, look)
      found.known.dev = info.dev
      found.known.ino = Option.getOrUndefined(info.ino)
      return found
    }).pipe(Effect.scoped)

  /**
   * Looks at one session file; answers what to announce. A poll skips the file whose size and
   * mtime are as last asked; a change the watch heard of reads on from the last line seen.
   */
  const check = (session: SessionId.SessionId, look: Look) =>
    Effect.gen(function*() {
      if (options.owned(session)) return []
      const file = path.join(directory, Format.fileName(session))
      // A name created or removed may name another file now: opened anew (the handle kept is let go).
      let handle = look === "first" || look === "renamed" ? undefined : kept.get(session)
      let stat: FileSystem.File.Info | undefined
      if (look === "poll") {
        stat = yield* fs.lstat(file)
        const seen = tracked.get(session)
        if (stat.type !== "File" || seen === undefined || !sameFile(stat, seen)) {
          yield* kept.release(session)
          handle = undefined
          if (stat.type !== "File") return []
        } else if (Number(stat.size) === seen.size && mtimeOf(stat) === seen.mtime) return []
      }
      const { before, known, tail } = handle === undefined ? yield* opened(session, file, look) : yield* tailOf(session, handle.file, stat, look)
      if (tail === "look again") known.size = -1 // even if nothing changes before the next poll
      if (typeof tail === "string") return []
      known.offset = tail.end
      known.seq = tail.seq
      if (look === "first" || tail.seq <= before) return []
      if (known.first < 0) known.first = before + 1
      // The first new seq too: the core reads from the last seq it published, or else from that one;
      // with the entries, when they were read, it reads nothing.
      return [{ session, seq: tail.seq, first: before + 1, ...(tail.entries === undefined ? {} : { entries: tail.entries }) }]
    }).pipe(
      Effect.catch((error) => {
        // Opened anew at the next look, if there is a file to look at.
        const forget = kept.release(session)
        return error._tag === "PlatformError" && error.reason._tag === "NotFound"
          ? Effect.as(Effect.andThen(forget, Effect.sync(() => tracked.delete(session))), [])
          : Effect.as(
            Effect.andThen(
              forget,
              Effect.logDebug(`SessionLogFile watch: can't look at ${session}: ${error._tag === "PlatformError" ? error.message : error.detail}`)
            ),
            []
          )
      })
    )

  const listed = Effect.map(
    Effect.orElseSucceed(fs.readDirectory(directory), () => []),
    (names) => names.flatMap((name) => sessionOf(name) ?? [])
  )

  /** Everything marked since the last drain: the files named by the watch, and all of them on a poll. */
  const drain = Effect.gen(function*() {
    const named = new Map(dirty)
    dirty.clear()
    const swept = sweep
    sweep = false
    const polled = new Set<SessionId.SessionId>()
    if (swept) {
      for (const session of [...(yield* listed), ...tracked.keys()]) if (!named.has(session)) polled.add(session)
    }
    const out: Array<Announcement> = []
    for (const [session, renamed] of named) out.push(...(yield* check(session, renamed ? "renamed" : "changed")))
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
        // Only session files: the journal, locks and the like change at every commit too.
        const session = sessionOf(path.basename(event.path))
        if (session === undefined) return
        dirty.set(session, dirty.get(session) === true || event._tag !== "Update")
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

  // Each wake settles before the drain: the writer that was heard of is still making its commit
  // durable, and work beside its sync slows it (measured on 2 cores: 0.4 ms of CPU spent at once
  // cost a lone append ~0.4 ms, the same 5 ms later ~0.1 ms); changes heard meanwhile share the drain.
  return Stream.fromQueue(wake).pipe(Stream.mapEffect(() => Effect.andThen(Effect.sleep(settle), drain)), Stream.flattenIterable)
})
