/**
 * An exclusive lock on appending to one session file, as a lock file beside it holding the owner's
 * pid and a random token. A lock whose process is gone (killed with SIGKILL, say, which leaves no
 * chance to clean up) is taken over: the stale file is first renamed aside, which only one taker can
 * do, and its content checked, so two takers can't both win.
 */
import { Clock, Effect, type FileSystem, type PlatformError, type Scope } from "effect"
import { Locked } from "../SessionLogError.ts"

export const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (cause) {
    // EPERM: the process exists but belongs to someone else.
    return (cause as { code?: string }).code === "EPERM"
  }
}

/** A lock file this young with no pid yet may be mid-creation by its owner. */
const creationGraceMs = 2_000

/** A pid written as text, or `undefined` if the text isn't one. */
export const parsePid = (text: string): number | undefined => {
  const pid = Number(text)
  return text.length > 0 && Number.isInteger(pid) && pid > 0 ? pid : undefined
}

const ownerPid = (content: string): number | undefined => parsePid(content.split(" ")[0]!)

/**
 * Takes the lock at `path` for the scope, or fails with `Locked` naming the live holder. Released
 * (the file removed, if it is still ours) when the scope closes.
 */
export const acquire = (
  fs: FileSystem.FileSystem,
  path: string
): Effect.Effect<void, Locked | PlatformError.PlatformError, Scope.Scope> =>
  Effect.gen(function*() {
    const token = `${process.pid} ${crypto.randomUUID()}\n`
    const fail = (detail: string) => Effect.fail(new Locked({ detail }))

    for (let attempt = 0; attempt < 5; attempt++) {
      const created = yield* Effect.exit(fs.writeFileString(path, token, { flag: "wx" }))
      if (created._tag === "Success") {
        yield* Effect.addFinalizer(() =>
          fs.readFileString(path).pipe(
            Effect.flatMap((content) => content === token ? fs.remove(path) : Effect.void),
            Effect.ignore
          )
        )
        return
      }
      const error = created.cause.reasons[0]
      if (!(error?._tag === "Fail" && error.error.reason._tag === "AlreadyExists")) {
        return yield* Effect.failCause(created.cause)
      }
      const content = yield* fs.readFileString(path).pipe(
        Effect.catchReason("PlatformError", "NotFound", () => Effect.succeed(undefined))
      )
      if (content === undefined) continue // released meanwhile: try again
      const pid = ownerPid(content)
      if (pid === undefined) {
        const info = yield* fs.stat(path)
        const now = yield* Clock.currentTimeMillis
        const age = now - (info.mtime._tag === "Some" ? info.mtime.value.getTime() : 0)
        if (age < creationGraceMs) {
          return yield* fail(`${path} is being created by another process`)
        }
      } else if (isAlive(pid)) {
        return yield* fail(
          pid === process.pid
            ? `another SessionLog in this process (pid ${pid}) is appending to it`
            : `process ${pid} is appending to it (lock file ${path})`
        )
      }
      // The holder is gone: move its lock aside, and make sure it was that lock we moved.
      const aside = `${path}.stale-${crypto.randomUUID()}`
      const moved = yield* Effect.exit(fs.rename(path, aside))
      if (moved._tag === "Failure") continue
      const movedContent = yield* fs.readFileString(aside)
      if (movedContent !== content) {
        // Another taker won the race and this moved its fresh lock: put it back.
        yield* fs.rename(aside, path).pipe(Effect.ignore)
        return yield* fail(`another process took over the stale lock ${path}`)
      }
      yield* fs.remove(aside).pipe(Effect.ignore)
    }
    return yield* fail(`could not take ${path}: it keeps changing hands`)
  })
