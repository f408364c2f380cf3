/**
 * An exclusive lock on appending to one session file, as a lock file beside it holding the owner
 * (pid and start time, see `Owner`) and a random token. A lock whose owner is gone (killed with
 * SIGKILL, say, which leaves no chance to clean up; or a pid since reused by another process) is
 * taken over: the stale file is first renamed aside, which only one taker can do, and its content
 * checked, so two takers can't both win.
 *
 * The holder keeps its lock file open, so the file's inode can't be reused while it lives, and
 * checks before each batch that the path still names that inode: a lock deleted or replaced by hand
 * stops the holder instead of letting a second writer interleave with it.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type * as FileSystem from "effect/FileSystem"
import * as Option from "effect/Option"
import type * as PlatformError from "effect/PlatformError"
import type * as Scope from "effect/Scope"
import { Locked, OwnershipLost, type UnsafePath } from "../SessionLogError.ts"
import * as BlockingIo from "./BlockingIo.ts"
import * as Owner from "./Owner.ts"
import * as RegularFile from "./RegularFile.ts"

/** A lock file this young with no pid yet may be mid-creation by its owner. */
const creationGraceMs = 2_000

/** Lock files are a line; anything longer is not one. */
const maxLockBytes = 4096

/** The lock file's content: `<pid> <token> <started>`; earlier versions wrote `<pid> <token>`. */
const contentOf = (owner: Owner.Owner): string => `${owner.pid} ${crypto.randomUUID()} ${owner.started ?? "-"}\n`

/** The owner a lock file names, or `undefined` if it names none (yet). */
const ownerOf = (content: string): Owner.Owner | undefined => {
  const [pid, , started] = content.trim().split(" ")
  const parsed = Owner.parsePid(pid ?? "")
  return parsed === undefined ? undefined : { pid: parsed, started: started === undefined || started === "-" ? undefined : started }
}

/** A held lock. */
export interface Held {
  readonly path: string
  /**
   * `OwnershipLost` if what is at the lock's path (its `lstat`) is not this holder's lock file: it
   * was removed, or replaced (its path names another inode, even a copy with the same content).
   */
  readonly verify: (found: BlockingIo.Identity | undefined) => OwnershipLost | undefined
  /** The lock file's device and inode: what `verify` compares with (for checks made elsewhere, see `IoThread`). */
  readonly dev: bigint
  readonly ino: bigint | undefined
  /** The same, looking at the lock's path through `io`. */
  readonly check: (io: BlockingIo.Io) => Effect.Effect<void, OwnershipLost | PlatformError.PlatformError>
  /** Leaves the lock file in place when released (its descriptor still closes): the session stays locked while this process lives. */
  readonly keep: () => void
}

const sameFile = (a: FileSystem.File.Info, b: FileSystem.File.Info) =>
  a.dev === b.dev && Option.getOrUndefined(a.ino) === Option.getOrUndefined(b.ino)

/**
 * Whether a live owner's lock found in the way is in fact stale: for this process's own pid, a lock
 * in the earlier format (no start time) that predates this process was left by an earlier life of
 * the pid (a restarted container), not by a SessionLog in this process.
 */
const olderThanThisProcess = (fs: FileSystem.FileSystem, path: string) =>
  Effect.gen(function*() {
    const info = yield* fs.lstat(path)
    const startedAt = (yield* Clock.currentTimeMillis) - process.uptime() * 1000
    return Option.isSome(info.mtime) && info.mtime.value.getTime() < startedAt - 1000
  })

/**
 * Takes the lock at `path` for the scope, or fails with `Locked` naming the live holder, or
 * `UnsafePath` if the path is a link or anything but a regular file. Released (the file removed, if
 * it is still this holder's) when the scope closes.
 */
export const acquire = (
  fs: FileSystem.FileSystem,
  path: string,
  self: Owner.Owner
): Effect.Effect<Held, Locked | UnsafePath | PlatformError.PlatformError, Scope.Scope> =>
  Effect.gen(function*() {
    const fail = (detail: string) => Effect.fail(new Locked({ detail }))

    /** Removes the lock file if its path still names `mine`: never another holder's. */
    const removeIfMine = (mine: FileSystem.File.Info) =>
      fs.lstat(path).pipe(
        Effect.flatMap((found) => sameFile(found, mine) ? fs.remove(path) : Effect.void),
        Effect.ignore
      )
    for (let attempt = 0; attempt < 5; attempt++) {
      let kept = false
      // O_EXCL: created here, or failing; a link in the way is never followed. Created, written and
      // its removal arranged with no interruption in between: an interrupted write still lands, and
      // would leave a lock naming this live process that nothing removes.
      const created = yield* Effect.exit(Effect.uninterruptible(Effect.gen(function*() {
        const file = yield* fs.open(path, { flag: "wx" })
        // Its identity first, while it is still empty: a failure here leaves a lock naming no one, which
        // others take over once `creationGraceMs` has passed.
        const info = yield* file.stat
        const written = yield* Effect.exit(file.writeAll(new TextEncoder().encode(contentOf(self))))
        // Removed only if the path still names this file: a write held up past `creationGraceMs` may
        // have let another process take the (empty) lock over and make its own.
        if (written._tag === "Failure") return yield* Effect.andThen(removeIfMine(info), Effect.failCause(written.cause))
        // Runs before the handle closes (finalizers run in reverse): the inode is still ours to compare.
        yield* Effect.addFinalizer(() => kept ? Effect.void : removeIfMine(info))
        return info
      })))
      if (created._tag === "Success") {
        const mine = created.value
        const verify = (found: BlockingIo.Identity | undefined) =>
          found === undefined
            ? new OwnershipLost({ path, detail: "was removed while this process held it" })
            : BlockingIo.isFile(found, mine)
            ? undefined
            : new OwnershipLost({ path, detail: "was replaced while this process held it" })
        return {
          path,
          verify,
          dev: mine.dev,
          ino: Option.getOrUndefined(mine.ino),
          check: (io) =>
            Effect.flatMap(io.lstat(path), (found) => {
              const lost = verify(found)
              return lost === undefined ? Effect.void : Effect.fail(lost)
            }),
          keep: () => {
            kept = true
          }
        } satisfies Held
      }
      const error = created.cause.reasons[0]
      if (!(error?._tag === "Fail" && error.error.reason._tag === "AlreadyExists")) {
        return yield* Effect.failCause(created.cause)
      }
      const content = yield* RegularFile.readString(fs, path, maxLockBytes).pipe(
        Effect.catchReason("PlatformError", "NotFound", () => Effect.succeed(undefined))
      )
      if (content === undefined) continue // released meanwhile: try again
      const owner = ownerOf(content)
      if (owner === undefined) {
        const info = yield* fs.lstat(path)
        const now = yield* Clock.currentTimeMillis
        const age = now - (info.mtime._tag === "Some" ? info.mtime.value.getTime() : 0)
        if (age < creationGraceMs) {
          return yield* fail(`${path} is being created by another process`)
        }
      } else if (yield* Owner.isAlive(fs, owner)) {
        const ours = owner.pid === self.pid
        if (!(ours && owner.started === undefined && (yield* olderThanThisProcess(fs, path)))) {
          return yield* fail(
            ours
              ? `another SessionLog in this process (pid ${owner.pid}) is appending to it`
              : `process ${owner.pid} is appending to it (lock file ${path})`
          )
        }
      }
      // The holder is gone: move its lock aside, and make sure it was that lock we moved.
      const aside = `${path}.stale-${crypto.randomUUID()}`
      const moved = yield* Effect.exit(fs.rename(path, aside))
      if (moved._tag === "Failure") continue
      const movedContent = yield* RegularFile.readString(fs, aside, maxLockBytes)
      if (movedContent !== content) {
        // Another taker won the race and this moved its fresh lock: put it back, unless a third
        // process has made a lock there meanwhile (a link, unlike a rename, never replaces one).
        yield* fs.link(aside, path).pipe(Effect.andThen(fs.remove(aside)), Effect.ignore)
        return yield* fail(`another process took over the stale lock ${path}`)
      }
      yield* fs.remove(aside).pipe(Effect.ignore)
    }
    return yield* fail(`could not take ${path}: it keeps changing hands`)
  })
