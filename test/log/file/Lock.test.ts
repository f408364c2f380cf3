import { assert, describe, it } from "@effect/vitest"
import { type ChildProcess, spawn } from "node:child_process"
import { join } from "node:path"
import { createInterface } from "node:readline"
import { Effect, Exit, FileSystem, Scope } from "effect"
import * as SessionFile from "../../../src/log/file/Format.ts"
import * as Lock from "../../../src/log/file/Lock.ts"
import * as Owner from "../../../src/log/file/Owner.ts"
import * as SessionLogFile from "../../../src/log/file/SessionLogFile.ts"
import { failureOf } from "../SessionLogConformance.ts"
import { failing, open, openRaw, overriding, session, systemError, todo, withDirectory } from "./FileTest.ts"
import { appender } from "../../support/Executables.ts"

const exited = (child: ChildProcess) =>
  Effect.promise(() => new Promise<void>((resolve) => child.exitCode !== null ? resolve() : child.once("exit", () => resolve())))

/** A lock left behind by a process that was SIGKILLed while it appended: its exact content. */
const deadLock = (directory: string) =>
  Effect.gen(function*() {
    const child = spawn(process.execPath, [appender, directory, session, "-"], { stdio: ["ignore", "pipe", "inherit"] })
    yield* Effect.promise(() =>
      new Promise<void>((resolve) => createInterface({ input: child.stdout! }).once("line", () => resolve()))
    )
    child.kill("SIGKILL")
    yield* exited(child)
    const fs = yield* FileSystem.FileSystem
    return yield* fs.readFileString(`${directory}/${SessionFile.lockName(session)}`)
  })

/** A live process that has nothing to do with the log, killed when the scope closes. */
const bystander = Effect.acquireRelease(
  Effect.sync(() => spawn("sleep", ["600"], { stdio: "ignore" })),
  (child) => Effect.andThen(Effect.sync(() => child.kill("SIGKILL")), exited(child))
)

const withPid = (lock: string, pid: number) => lock.replace(/^\d+/, String(pid))

describe("Lock", () => {
  it.live("a lock whose pid a live, unrelated process reused is stale and taken over", () =>
    withDirectory((directory) =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const lock = yield* deadLock(directory)
        const other = yield* bystander
        yield* fs.writeFileString(`${directory}/${SessionFile.lockName(session)}`, withPid(lock, other.pid!))
        const entry = yield* open(directory, (log) => log.append(session, "todo/write", todo("after")))
        assert.isAbove(entry.seq, 0)
      })
    ), 30_000)

  it.live("a lock holding this process's own pid from an earlier life (a restarted container) is taken over", () =>
    withDirectory((directory) =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const lockPath = `${directory}/${SessionFile.lockName(session)}`
        const lock = yield* deadLock(directory)
        yield* fs.writeFileString(lockPath, withPid(lock, process.pid))
        assert.isAbove((yield* open(directory, (log) => log.append(session, "todo/write", todo("one")))).seq, 0)
        // the format of earlier versions, `pid token`, written before this process started
        yield* fs.writeFileString(lockPath, `${process.pid} ${crypto.randomUUID()}\n`)
        const hourAgo = new Date(Date.now() - 3_600_000)
        yield* fs.utimes(lockPath, hourAgo, hourAgo)
        assert.isAbove((yield* open(directory, (log) => log.append(session, "todo/write", todo("two")))).seq, 1)
      })
    ), 30_000)

  it.effect("a lock held by another SessionLog of this very process still refuses", () =>
    withDirectory((directory) =>
      Effect.gen(function*() {
        const error = yield* openRaw(directory, (first) =>
          Effect.andThen(
            first.append(session, "todo/write", todo("one")),
            Effect.exit(openRaw(directory, (second) => second.append(session, "todo/write", todo("two"))))
          ))
        assert.deepInclude(failureOf(error).reason, { _tag: "Locked" })
        assert.include(failureOf(error).message, "in this process")
      })
    ))

  it.effect("a dangling symbolic link as the lock is refused at once, naming it", () =>
    withDirectory((directory) =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const lockPath = `${directory}/${SessionFile.lockName(session)}`
        yield* fs.symlink(`${directory}/nowhere`, lockPath)
        const error = failureOf(yield* Effect.exit(open(directory, (log) => log.append(session, "todo/write", todo("x")))))
        assert.deepInclude(error.reason, { _tag: "UnsafePath", path: lockPath })
        assert.notInclude(error.message, "changing hands")
        assert.isFalse(yield* fs.exists(`${directory}/nowhere`))
      })
    ))
})

describe("Lock: storage failures say what happened", () => {
  it.effect("a lock that can't be created on a read-only file system says so, naming the errno and the lock", () =>
    withDirectory((directory) =>
      Effect.gen(function*() {
        const real = yield* FileSystem.FileSystem
        const lockPath = `${directory}/${SessionFile.lockName(session)}`
        const fs = failing(real, { open: (path, flag) => flag === "wx" ? systemError("EROFS", "open", path) : undefined })
        const error = failureOf(yield* Effect.exit(openRaw(directory, (log) => log.append(session, "x", {}), {}, fs)))
        assert.deepInclude(error.reason, { _tag: "StorageFailure", kind: "ReadOnly" })
        assert.include(error.message, "the file system is read-only")
        assert.include(error.message, "EROFS")
        assert.include(error.message, lockPath)
        // a check of the logs (the CLI's verify) doesn't mistake it for a session in use
        const repaired = failureOf(yield* Effect.exit(
          SessionLogFile.repair({ directory }, session).pipe(Effect.provideService(FileSystem.FileSystem, fs))
        ))
        assert.deepInclude(repaired.reason, { _tag: "StorageFailure", kind: "ReadOnly" })
      })
    ))
})

describe("Lock: a creation that fails", () => {
  for (const call of ["writeAll", "stat"] as const) {
    it.live(`a lock file whose ${call} fails as it is created names no live process: ${
      call === "writeAll" ? "removed at once" : "left empty, taken over past the grace"
    }, the next acquire takes the lock`, () =>
      withDirectory((directory) =>
        Effect.gen(function*() {
          const real = yield* FileSystem.FileSystem
          const lockPath = join(directory, SessionFile.lockName(session))
          const failed = systemError("EIO", call, lockPath)
          const fs = overriding(real, (path) =>
            path !== lockPath ? undefined : {
              [call]: call === "writeAll" ? { value: () => Effect.fail(failed) } : { get: () => Effect.fail(failed) }
            })
          const self = yield* Owner.self(real)
          assert.isTrue(Exit.isFailure(yield* Effect.exit(Effect.scoped(Lock.acquire(fs, lockPath, self)))))
          if (call === "writeAll") {
            assert.isFalse(yield* real.exists(lockPath), "no lock naming this live process is left behind")
          } else {
            // Its identity unknown, it is not removed; but it is empty, naming no one: taken over past the grace.
            assert.strictEqual(yield* real.readFileString(lockPath), "", "no lock naming this live process is left behind")
            const old = new Date(Date.now() - 3_000)
            yield* real.utimes(lockPath, old, old)
          }
          assert.isTrue(Exit.isSuccess(yield* Effect.exit(Effect.scoped(Lock.acquire(real, lockPath, self)))))
        })))
  }

  it.live("a creation whose write is held up past the grace, then fails, leaves the lock another process took over meanwhile", () =>
    withDirectory((directory) =>
      Effect.gen(function*() {
        const real = yield* FileSystem.FileSystem
        const lockPath = join(directory, SessionFile.lockName(session))
        const self = yield* Owner.self(real)
        const otherScope = yield* Scope.make()
        let other: Lock.Held | undefined
        const fs = overriding(real, (path) =>
          path !== lockPath ? undefined : {
            writeAll: {
              value: () =>
                Effect.gen(function*() {
                  // The write blocks for more than creationGraceMs (simulated by backdating the empty file) ...
                  const old = new Date(Date.now() - 3_000)
                  yield* real.utimes(lockPath, old, old)
                  // ... meanwhile another process finds an empty lock past its grace and takes it over ...
                  other = yield* Scope.provide(Lock.acquire(real, lockPath, self), otherScope)
                  // ... then the write fails.
                  return yield* systemError("EIO", "writeAll", lockPath)
                })
            }
          })
        assert.isTrue(Exit.isFailure(yield* Effect.exit(Effect.scoped(Lock.acquire(fs, lockPath, self)))))
        assert.isDefined(other, "the other process took the lock over")
        assert.isTrue(yield* real.exists(lockPath), "the other process's lock is still there")
        const found = yield* real.lstat(lockPath)
        assert.strictEqual(found.ino._tag === "Some" ? found.ino.value : undefined, other!.ino, "and is the other process's")
        yield* Scope.close(otherScope, Exit.void)
      })))
})
