/**
 * Closing the log while a batch is in flight: the close waits for it, so its fsync (or, failing,
 * its cut) reaches the session file and not a descriptor the process has since reused for another
 * file; the append waiting behind it is answered with a failure, not left waiting forever. Nor is
 * any of many sessions' appends when the log closes under them (in journal mode, a round may then
 * be posted while another answers: `JournalRound.postAt`).
 */
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Duration, Effect, Exit, Fiber, FileSystem, Layer, Path, Scope } from "effect"
import { readlinkSync } from "node:fs"
import * as BlockingIo from "../../../src/log/file/BlockingIo.ts"
import * as Journal from "../../../src/log/file/Journal.ts"
import * as JournalRound from "../../../src/log/file/JournalRound.ts"
import * as SessionLogFile from "../../../src/log/file/SessionLogFile.ts"
import * as Owner from "../../../src/log/file/Owner.ts"
import * as Writers from "../../../src/log/file/Writers.ts"
import * as SessionId from "../../../src/log/SessionId.ts"
import * as SessionLog from "../../../src/log/SessionLog.ts"
import * as TodoEvents from "../../../src/todo/TodoEvents.ts"
import { failureOf } from "../SessionLogConformance.ts"
import { fileOf, hasProcFds, layer, readAll, session, systemError, withDirectory } from "./FileTest.ts"

interface Gate {
  /** From now on, a sync of a file whose path ends so waits for `open`. */
  armed: string | undefined
  /** The sync fails once the gate opens. */
  fails: boolean
  /** What the descriptor synced named when the sync ran. */
  syncedThrough: string | undefined
}

/** The real file system, but an armed sync signals `reached`, then waits for `open`. */
const gated = (real: FileSystem.FileSystem, gate: Gate, reached: Deferred.Deferred<void>, open: Deferred.Deferred<void>) =>
  FileSystem.FileSystem.of({
    ...real,
    open: (path, options) =>
      Effect.map(real.open(path, options), (file) =>
        Object.create(file, {
          sync: {
            get: () =>
              gate.armed === undefined || !path.endsWith(gate.armed) ? file.sync : Effect.gen(function*() {
                yield* Deferred.succeed(reached, undefined)
                yield* Deferred.await(open)
                const fd = BlockingIo.descriptorOf(file)
                if (hasProcFds && fd !== undefined) gate.syncedThrough = readlinkSync(`/proc/self/fd/${fd}`)
                return gate.fails ? yield* systemError("EIO", "sync", path) : yield* file.sync
              })
          }
        }))
  })

/**
 * A log over `directory` whose next armed sync is held: append 0 lands, append 1's sync waits at the
 * gate, append 2 waits behind it, and the log starts closing. Answers the three outcomes once the
 * gate opens, and whether the close had waited for it.
 */
const closedMidBatch = (directory: string, journal: boolean, armed: string, fails: boolean) =>
  Effect.gen(function*() {
    const gate: Gate = { armed: undefined, fails, syncedThrough: undefined }
    const reached = yield* Deferred.make<void>()
    const open = yield* Deferred.make<void>()
    const scope = yield* Scope.make()
    const context = yield* Layer.buildWithScope(
      layer(directory, { journal }, gated(yield* FileSystem.FileSystem, gate, reached, open)),
      scope
    )
    const log = yield* SessionLog.SessionLog.pipe(Effect.provide(context))
    assert.strictEqual((yield* log.append(session, "todo/write", { todos: [] })).seq, 0)
    gate.armed = armed
    const inFlight = yield* Effect.forkChild(Effect.exit(log.append(session, "todo/write", { todos: [] })))
    yield* Deferred.await(reached)
    const behind = yield* Effect.forkChild(Effect.exit(log.append(session, "todo/write", { todos: [] })))
    yield* Effect.sleep("20 millis")
    const closing = yield* Effect.forkChild(Scope.close(scope, Exit.void))
    yield* Effect.sleep("50 millis")
    const waited = closing.pollUnsafe() === undefined
    yield* Deferred.succeed(open, undefined)
    yield* Fiber.join(closing).pipe(Effect.timeout("5 seconds"))
    const first = yield* Fiber.join(inFlight).pipe(Effect.timeout("5 seconds"))
    const second = yield* Fiber.join(behind).pipe(Effect.timeout("5 seconds"))
    return { first, second, waited, syncedThrough: gate.syncedThrough }
  })

for (const mode of [{ name: "fsync mode", journal: false, armed: ".jsonl" }, { name: "journal mode", journal: true, armed: Journal.extension }]) {
  describe(`SessionLogFile (${mode.name}): closing while a batch is in flight`, () => {
    it.live("the close waits for the batch, which is acknowledged; the append behind it fails, saying the log closed", () =>
      withDirectory((directory) =>
        Effect.gen(function*() {
          const { first, second, syncedThrough, waited } = yield* closedMidBatch(directory, mode.journal, mode.armed, false)
          assert.isTrue(waited, "the close waited for the batch in flight")
          assert.isTrue(Exit.isSuccess(first), `the batch in flight was acknowledged: ${String(first)}`)
          if (hasProcFds && !mode.journal) assert.strictEqual(syncedThrough, fileOf(directory), "its fsync reached the session file")
          const error = failureOf(second)
          assert.strictEqual(error._tag, "SessionLogError")
          assert.match(error.message, /closed/)
          const reopened = yield* Effect.flatMap(SessionLog.SessionLog, (log) => readAll(log)).pipe(
            Effect.provide(layer(directory, { journal: mode.journal }))
          )
          assert.deepStrictEqual(reopened.map((entry) => entry.seq), [0, 1], "what was acknowledged, and nothing else")
        })
      ), 20_000)
  })
}

describe("SessionLogFile (fsync mode): closing while a batch's fsync fails", () => {
  it.live("the batch fails and is cut from its own session file, which the close had not closed under it", () =>
    withDirectory((directory) =>
      Effect.gen(function*() {
        const { first, second, syncedThrough, waited } = yield* closedMidBatch(directory, false, ".jsonl", true)
        assert.isTrue(waited, "the close waited for the batch in flight")
        assert.isTrue(Exit.isFailure(first), "the batch whose fsync failed is not acknowledged")
        if (hasProcFds) assert.strictEqual(syncedThrough, fileOf(directory))
        assert.isTrue(Exit.isFailure(second))
        const verified = yield* SessionLogFile.verify({ directory }, session, TodoEvents.invariants)
        assert.deepInclude(verified, { events: 1, tornTailBytes: 0 }, "its lines were cut from the session file")
      })
    ), 20_000)
})

describe("SessionLogFile: opening a session as the log closes", () => {
  it.live("an open under way finishes before the writers close: its append is answered, and no lock is left behind", () =>
    withDirectory((directory) =>
      Effect.gen(function*() {
        const real = yield* FileSystem.FileSystem
        const reached = yield* Deferred.make<void>()
        const gate = yield* Deferred.make<void>()
        // Taking the session's lock waits at the gate: the open is under way.
        const fs = FileSystem.FileSystem.of({
          ...real,
          open: (path, options) =>
            path.endsWith(".lock") && options?.flag === "wx"
              ? Effect.andThen(Effect.andThen(Deferred.succeed(reached, undefined), Deferred.await(gate)), real.open(path, options))
              : real.open(path, options)
        })
        const scope = yield* Scope.make()
        const context = yield* Layer.buildWithScope(layer(directory, {}, fs), scope)
        const log = yield* SessionLog.SessionLog.pipe(Effect.provide(context))
        const appending = yield* Effect.forkChild(Effect.exit(log.append(session, "todo/write", { todos: [] })))
        yield* Deferred.await(reached)
        const closing = yield* Effect.forkChild(Scope.close(scope, Exit.void))
        yield* Effect.sleep("30 millis")
        assert.isUndefined(closing.pollUnsafe(), "the close waits for the open under way")
        yield* Deferred.succeed(gate, undefined)
        yield* Fiber.join(closing).pipe(Effect.timeout("5 seconds"))
        const appended = yield* Fiber.join(appending).pipe(Effect.timeout("5 seconds"))
        // Stored before its writer closed, or refused by the closing writer: never a failure of a file closed under it.
        if (Exit.isFailure(appended)) assert.strictEqual(failureOf(appended).reason._tag, "OwnershipLost", String(appended))
        assert.deepStrictEqual((yield* real.readDirectory(directory)).filter((name) => name.endsWith(".lock")), [], "no lock left behind")
      })
    ), 20_000)

  it.live("after the log closed, an append to a session it never opened fails, saying so, and takes no lock", () =>
    withDirectory((directory) =>
      Effect.gen(function*() {
        const scope = yield* Scope.make()
        const log = yield* SessionLog.SessionLog.pipe(Effect.provide(yield* Layer.buildWithScope(layer(directory, {}), scope)))
        yield* log.append(session, "todo/write", { todos: [] })
        yield* Scope.close(scope, Exit.void)
        const error = failureOf(yield* Effect.exit(log.append(SessionId.decodeSync("never-opened"), "todo/write", { todos: [] })))
        assert.strictEqual(error.reason._tag, "StorageFailure")
        assert.match(error.message, /the log is closed/)
        const fs = yield* FileSystem.FileSystem
        assert.deepStrictEqual((yield* fs.readDirectory(directory)).sort(), [`${session}.jsonl`])
      })
    ), 20_000)
})

describe("Writers: once the pool's scope has closed", () => {
  it.effect("no session opens: a batch fails, saying the log is closed, and no lock is taken", () =>
    withDirectory((directory) =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const scope = yield* Scope.make()
        const pool = yield* Writers.make({
          fs,
          path: yield* Path.Path,
          directory,
          self: yield* Owner.self(fs),
          journal: undefined,
          maxLineBytes: 1024 * 1024,
          idle: Duration.minutes(5),
          heldBack: { locks: [], journalStays: () => false }
        }).pipe(Scope.provide(scope))
        yield* Scope.close(scope, Exit.void)
        const used = yield* Effect.exit(pool.use(session, () => Effect.succeed("written")))
        assert.isTrue(Exit.isFailure(used))
        assert.match(String(used), /the log is closed/)
        assert.deepStrictEqual(yield* fs.readDirectory(directory), [], "no lock, no session file")
      })
    ))
})

describe("SessionLogFile (journal mode): closing while many sessions append", () => {
  /**
   * 64 sessions append, each one at a time, until the log refuses (its rounds posted early where
   * `placement` says); it closes after `closeAfter` acknowledged appends, and opens again for the next.
   * Then every session holds exactly what it had acknowledged.
   */
  const appendUntilClosed = (
    directory: string,
    closeAfters: ReadonlyArray<number>,
    placement: JournalRound.Placement
  ) =>
    Effect.gen(function*() {
      const sessions = Array.from({ length: 64 }, (_, i) => SessionId.decodeSync(`many-${i}`))
      const acknowledged = new Map(sessions.map((id) => [id, [] as Array<number>]))
      for (const closeAfter of closeAfters) {
        const scope = yield* Scope.make()
        const log = yield* SessionLog.SessionLog.pipe(Effect.provide(yield* Layer.buildWithScope(Layer.provide(layer(directory, { journal: true }), Layer.succeed(JournalRound.RoundPlacement, placement)), scope)))
        let total = 0
        const reached = yield* Deferred.make<void>()
        const appending = yield* Effect.forkChild(Effect.forEach(sessions, (id) =>
          Effect.gen(function*() {
            while (true) {
              const exit = yield* Effect.exit(log.append(id, "todo/write", { todos: [] }))
              if (Exit.isFailure(exit)) return failureOf(exit)
              acknowledged.get(id)!.push(exit.value.seq)
              if (++total === closeAfter) yield* Deferred.succeed(reached, undefined)
            }
          }), { concurrency: "unbounded" }))
        yield* Deferred.await(reached)
        yield* Scope.close(scope, Exit.void).pipe(Effect.timeout("10 seconds"))
        const failures = yield* Fiber.join(appending).pipe(Effect.timeout("10 seconds"))
        for (const error of failures) assert.match(error.message, /closed/, "refused, saying the log closed")
      }
      const reopened = SessionLog.SessionLog.pipe(Effect.provide(layer(directory, { journal: true })))
      for (const id of sessions) {
        const stored = yield* Effect.flatMap(reopened, (read) => readAll(read, id))
        assert.deepStrictEqual(stored.map((entry) => entry.seq), acknowledged.get(id)!, `${id}: what was acknowledged, and nothing else`)
      }
    })

  it.live("every append is answered, with every round split (the next posted halfway through its answers): those acknowledged are in their files, the others fail, saying the log closed", () =>
    withDirectory((directory) =>
      Effect.gen(function*() {
        let posts = 0
        const halves: JournalRound.Placement = (answering, waiting) =>
          waiting > 0 ? (posts++, 0) : answering > 1 ? (posts++, answering >> 1) : undefined
        yield* appendUntilClosed(directory, [40, 300, 900], halves)
        assert.isAbove(posts, 10, "rounds were posted early")
      })
    ), 60_000)
})
