import { assert, describe, it } from "@effect/vitest"
import { Cause, Deferred, Effect, Exit, Fiber, Result, Stream } from "effect"
import * as GroupCommit from "../../src/log/internal/groupCommit.ts"
import * as SessionId from "../../src/log/SessionId.ts"
import * as SessionLog from "../../src/log/SessionLog.ts"
import { Corrupt, InvalidPayload, InvalidSessionId, Locked, SessionLogError } from "../../src/log/SessionLogError.ts"
import { systemError } from "./file/FileTest.ts"
import { conformance, failureOf } from "./SessionLogConformance.ts"
import * as SessionEvent from "../../src/log/SessionEvent.ts"

conformance("memory", () => SessionLog.layerMemory)

const session = SessionId.decodeSync("core")

/** A backend over an array, whose `append` runs `before` first (to hold or break it). */
const arrayBackend = (before: (batch: ReadonlyArray<SessionLog.Prepared>) => Effect.Effect<void> = () => Effect.void) => {
  const entries: Array<ReturnType<typeof SessionEvent.makeEntry>> = []
  const batches: Array<number> = []
  const backend: SessionLog.Backend = {
    append: (_, batch) =>
      Effect.map(before(batch), () => {
        batches.push(batch.length)
        const first = entries.length
        for (const [i, p] of batch.entries()) entries.push(SessionEvent.makeEntry(p.type, first + i, p.time, p.data))
        return first
      }),
    read: (_, fromSeq) => Stream.suspend(() => Stream.fromArray(entries.slice(fromSeq))),
    sessions: Effect.sync(() => (entries.length > 0 ? [session, "not a valid id!"] : []))
  }
  return { backend, entries, batches }
}

/**
 * The array backend with `appendNow`: `now` says what it does with a batch (store it at once,
 * decline it, fail it, or throw); every call is logged.
 */
const nowBackend = (now: (batch: ReadonlyArray<SessionLog.Prepared>) => "store" | "decline" | "throw" | Error = () => "store") => {
  const base = arrayBackend()
  const calls: Array<string> = []
  const backend: SessionLog.Backend = {
    ...base.backend,
    append: (s, batch) => Effect.andThen(Effect.sync(() => calls.push(`append ${batch.length}`)), base.backend.append(s, batch)),
    appendNow: (_, batch) => {
      const what = now(batch)
      if (what === "decline") {
        calls.push(`declined ${batch.length}`)
        return undefined
      }
      if (what === "throw") throw new Error("a bug in appendNow")
      if (what instanceof Error) return Result.fail(what)
      calls.push(`now ${batch.length}`)
      const first = base.entries.length
      for (const [i, p] of batch.entries()) base.entries.push(SessionEvent.makeEntry(p.type, first + i, p.time, p.data))
      return Result.succeed(first)
    }
  }
  return { backend, calls, entries: base.entries }
}

describe("SessionLog.make with a backend's appendNow", () => {
  it.effect("a lone append is stored at once, with no call to append; it is published before it returns, and reads back", () =>
    Effect.gen(function*() {
      const { backend, calls } = nowBackend()
      const log = yield* SessionLog.make(backend)
      const live = yield* log.subscribe
      const entry = yield* log.append(session, "x", { n: 1 })
      assert.strictEqual(entry.seq, 0)
      assert.deepStrictEqual(calls, ["now 1"])
      assert.deepStrictEqual((yield* Stream.runCollect(Stream.take(live, 1))).map((c) => c.entry), [entry])
      assert.deepStrictEqual(yield* Stream.runCollect(log.read(session)), [entry])
    }).pipe(Effect.scoped))

  it.effect("appends that come while the first lets the ready fibers go first join its batch", () =>
    Effect.gen(function*() {
      const { backend, calls } = nowBackend()
      const log = yield* SessionLog.make(backend)
      const entries = yield* Effect.forEach([0, 1, 2, 3, 4], (i) => log.append(session, "x", i), { concurrency: "unbounded" })
      assert.deepStrictEqual(entries.map((e) => [e.seq, e.data]), [[0, 0], [1, 1], [2, 2], [3, 3], [4, 4]])
      assert.deepStrictEqual(calls, ["now 5"], "one batch for the burst")
    }))

  /** A log whose backend stores every batch at once, noting it in `order` as "now <data>". */
  const notingOrder = Effect.gen(function*() {
    const order: Array<string> = []
    const { backend } = nowBackend((batch) => {
      order.push(`now ${batch[0]!.data}`)
      return "store"
    })
    return { order, log: yield* SessionLog.make(backend) }
  })

  it.effect("batches stored at once back to back let the event loop turn: its I/O waits at most a few of them", () =>
    Effect.gen(function*() {
      const { log, order } = yield* notingOrder
      setImmediate(() => order.push("event loop"))
      for (let i = 0; i < 2 * GroupCommit.maxBlockingInARow + 2; i++) yield* log.append(session, "x", i)
      const turned = order.indexOf("event loop")
      assert.isTrue(turned >= 0 && turned <= GroupCommit.maxBlockingInARow, order.join(", "))
    }))

  it.effect("appends that come apart, the event loop turning between them, never wait for a turn of their own", () =>
    Effect.gen(function*() {
      const { log, order } = yield* notingOrder
      for (let i = 0; i < 3 * GroupCommit.maxBlockingInARow + 3; i++) {
        yield* Effect.promise(() => new Promise<void>((resolve) => setImmediate(resolve)))
        setImmediate(() => order.push(`turn after ${i}`))
        yield* log.append(session, "x", i)
        assert.deepStrictEqual(order.slice(-1), [`now ${i}`], `append ${i} waited for a turn of the event loop: ${order.join(", ")}`)
        assert.notInclude(order, `turn after ${i}`, `append ${i} waited for a turn of the event loop: ${order.join(", ")}`)
      }
    }))

  it.effect("appends that arrive while a lone batch lets ready fibers go first join it; the session then takes the next", () =>
    Effect.gen(function*() {
      const batches: Array<ReadonlyArray<unknown>> = []
      const { backend } = nowBackend((batch) => {
        batches.push(batch.map((prepared) => prepared.data))
        return "store"
      })
      const log = yield* SessionLog.make(backend)
      const entries = yield* Effect.forEach([1, 2, 3], (i) => log.append(session, "x", i), { concurrency: "unbounded" })
      assert.deepStrictEqual(entries.map((entry) => entry.seq), [0, 1, 2])
      assert.deepStrictEqual(batches, [[1, 2, 3]], "the three were stored together, by the first")
      assert.strictEqual((yield* log.append(session, "x", 4)).seq, 3)
      assert.deepStrictEqual(batches, [[1, 2, 3], [4]])
    }))

  it.effect("a batch appendNow declines goes through append", () =>
    Effect.gen(function*() {
      const { backend, calls } = nowBackend(() => "decline")
      const log = yield* SessionLog.make(backend)
      assert.strictEqual((yield* log.append(session, "x", 1)).seq, 0)
      assert.deepStrictEqual(calls, ["declined 1", "append 1"])
    }))

  it.effect("while another session's batch is being stored, an append goes through append without asking appendNow", () =>
    Effect.gen(function*() {
      const gate = yield* Deferred.make<void>()
      const calls: Array<string> = []
      const entries: Array<ReturnType<typeof SessionEvent.makeEntry>> = []
      const store = (batch: ReadonlyArray<SessionLog.Prepared>) => {
        const first = entries.length
        for (const [i, p] of batch.entries()) entries.push(SessionEvent.makeEntry(p.type, first + i, p.time, p.data))
        return first
      }
      const backend: SessionLog.Backend = {
        // The first session's batch is held in `append` until the gate opens.
        append: (s, batch) =>
          Effect.andThen(
            Effect.sync(() => calls.push(`append ${s}`)),
            Effect.andThen(s === session ? Deferred.await(gate) : Effect.void, Effect.sync(() => store(batch)))
          ),
        appendNow: (s, batch) => {
          calls.push(`now ${s}`)
          return s === session ? undefined : Result.succeed(store(batch))
        },
        read: () => Stream.empty,
        sessions: Effect.succeed([])
      }
      const log = yield* SessionLog.make(backend)
      const held = yield* Effect.forkChild(log.append(session, "x", 1))
      while (!calls.includes(`append ${session}`)) yield* Effect.yieldNow
      const other = SessionId.decodeSync("other")
      const second = yield* Effect.forkChild(log.append(other, "x", 2))
      assert.strictEqual((yield* Fiber.join(second)).seq, 0)
      const meanwhile = [...calls]
      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.join(held)
      assert.deepStrictEqual(meanwhile, [`now ${session}`, `append ${session}`, `append ${other}`])
      assert.strictEqual((yield* log.append(other, "x", 3)).seq, 2, "alone again: stored at once")
      assert.deepStrictEqual(calls.slice(3), [`now ${other}`])
    }).pipe(Effect.scoped))

  it.effect("appendNow's failure fails the append as a storage failure, and the session takes the next", () =>
    Effect.gen(function*() {
      let broken = true
      const cause = new Error("EIO: i/o error, write")
      const { backend } = nowBackend(() => (broken ? cause : "store"))
      const log = yield* SessionLog.make(backend)
      const error = failureOf(yield* Effect.exit(log.append(session, "x", 1)))
      assert.strictEqual(error.reason._tag, "StorageFailure")
      assert.strictEqual(error.cause, cause)
      broken = false
      assert.strictEqual((yield* log.append(session, "x", 2)).seq, 0)
    }))

  it.effect("an appendNow that throws fails every append of its batch; the session takes the next append", () =>
    Effect.gen(function*() {
      let broken = true
      const { backend } = nowBackend(() => (broken ? "throw" : "store"))
      const log = yield* SessionLog.make(backend)
      const exits = yield* Effect.forEach([1, 2, 3], (i) => Effect.exit(log.append(session, "x", i)), { concurrency: "unbounded" })
      for (const exit of exits) assert.isTrue(Exit.isFailure(exit) && Cause.hasDies(exit.cause))
      broken = false
      assert.strictEqual((yield* log.append(session, "x", 4)).seq, 0)
    }))
})

describe("SessionLog.make, the core every backend is built on", () => {
  it.effect("groups appends that arrive while a batch is being stored into the next batch", () =>
    Effect.gen(function*() {
      const gate = yield* Deferred.make<void>()
      let held = false
      const { backend, batches } = arrayBackend(() =>
        held ? Effect.void : Effect.andThen(Effect.sync(() => (held = true)), Deferred.await(gate))
      )
      const log = yield* SessionLog.make(backend)
      const first = yield* Effect.forkChild(log.append(session, "x", 0))
      yield* Effect.yieldNow
      const rest = yield* Effect.forkChild(
        Effect.forEach([1, 2, 3, 4], (i) => log.append(session, "x", i), { concurrency: "unbounded" })
      )
      yield* Effect.yieldNow
      yield* Deferred.succeed(gate, undefined)
      assert.strictEqual((yield* Fiber.join(first)).seq, 0)
      assert.deepStrictEqual((yield* Fiber.join(rest)).map((e) => e.seq), [1, 2, 3, 4])
      assert.deepStrictEqual(batches, [1, 4])
    }))

  it.effect("a caller's append returns once its own batch is stored, while the session stays busy", () =>
    Effect.gen(function*() {
      const first = yield* Deferred.make<void>()
      const second = yield* Deferred.make<void>()
      let calls = 0
      const { backend, batches } = arrayBackend(() => {
        calls++
        return calls === 1 ? Deferred.await(first) : calls === 2 ? Deferred.await(second) : Effect.void
      })
      const log = yield* SessionLog.make(backend)
      const leader = yield* Effect.forkChild(log.append(session, "x", 0))
      yield* Effect.yieldNow
      const others = yield* Effect.forkChild(
        Effect.forEach([1, 2, 3], (i) => log.append(session, "x", i), { concurrency: "unbounded" })
      )
      yield* Effect.yieldNow
      yield* Deferred.succeed(first, undefined)
      // The next batch is held in the backend; the first caller is answered all the same.
      assert.strictEqual((yield* Fiber.join(leader)).seq, 0)
      yield* Deferred.succeed(second, undefined)
      assert.deepStrictEqual((yield* Fiber.join(others)).map((e) => e.seq), [1, 2, 3])
      assert.deepStrictEqual(batches, [1, 3])
    }))

  it.effect("a backend that dies fails the appends it was to store, and the session takes the next append", () =>
    Effect.gen(function*() {
      let broken = true
      const { backend } = arrayBackend(() => (broken ? Effect.die("disk on fire") : Effect.void))
      const log = yield* SessionLog.make(backend)
      const exit = yield* Effect.exit(log.append(session, "x", 1))
      assert.isTrue(Exit.isFailure(exit) && Cause.hasDies(exit.cause))
      broken = false
      assert.strictEqual((yield* log.append(session, "x", 2)).seq, 0)
    }))

  it.effect("keeps grouping, batch after batch, while the session stays busy; once idle, the backend is left alone", () =>
    Effect.gen(function*() {
      const gates = [yield* Deferred.make<void>(), yield* Deferred.make<void>()]
      let calls = 0
      const { backend, batches } = arrayBackend(() => {
        const gate = gates[calls++]
        return gate === undefined ? Effect.void : Deferred.await(gate)
      })
      const log = yield* SessionLog.make(backend)
      const appendAll = (data: ReadonlyArray<number>) =>
        Effect.forkChild(Effect.forEach(data, (i) => log.append(session, "x", i), { concurrency: "unbounded" }))
      const first = yield* appendAll([0])
      yield* Effect.yieldNow
      const second = yield* appendAll([1, 2, 3])
      yield* Effect.yieldNow
      yield* Deferred.succeed(gates[0]!, undefined)
      assert.deepStrictEqual((yield* Fiber.join(first)).map((e) => e.seq), [0])
      // The second batch is held in the backend; these gather behind it, into a third.
      const third = yield* appendAll([4, 5])
      yield* Effect.yieldNow
      yield* Deferred.succeed(gates[1]!, undefined)
      assert.deepStrictEqual((yield* Fiber.join(second)).map((e) => e.seq), [1, 2, 3])
      assert.deepStrictEqual((yield* Fiber.join(third)).map((e) => [e.seq, e.data]), [[4, 4], [5, 5]])
      // Nothing is waiting: no further (empty) batch is stored, however often the scheduler turns.
      for (let i = 0; i < 10; i++) yield* Effect.yieldNow
      assert.deepStrictEqual(batches, [1, 3, 2])
    }))

  it.effect("a backend that breaks its contract fails the appends it was to store and those gathered behind them; the session takes the next append", () =>
    Effect.gen(function*() {
      const gates = [yield* Deferred.make<void>(), yield* Deferred.make<void>()]
      let calls = 0
      const inner = arrayBackend(() => {
        const gate = gates[calls++]
        return gate === undefined ? Effect.void : Deferred.await(gate)
      })
      let broken: "throws" | "fails with no Failure" | undefined = "throws"
      const log = yield* SessionLog.make({
        ...inner.backend,
        append: (s, batch) => {
          if (broken === "throws" && batch.length === 3) throw new Error("a bug in the backend")
          if (broken === "fails with no Failure" && batch.length === 1) {
            // Neither an Error nor a Reason: mapping it to the log's error throws, once the batch was held.
            return Effect.andThen(inner.backend.append(s, []), Effect.fail("timed out" as unknown as Error))
          }
          return inner.backend.append(s, batch)
        }
      })
      const appendAll = (data: ReadonlyArray<number>) =>
        Effect.forkChild(Effect.forEach(data, (i) => Effect.exit(log.append(session, "x", i)), { concurrency: "unbounded" }))
      const allDie = (exits: ReadonlyArray<Exit.Exit<unknown, unknown>>) => {
        assert.isNotEmpty(exits)
        for (const exit of exits) assert.isTrue(Exit.isFailure(exit) && Cause.hasDies(exit.cause), String(exit))
      }

      // Three gather behind the first append and are stored next, on a fiber of their own: the
      // backend throws before answering, so nothing but the cleanup can answer them.
      const leader = yield* appendAll([0])
      yield* Effect.yieldNow
      const gathered = yield* appendAll([1, 2, 3])
      yield* Effect.yieldNow
      yield* Deferred.succeed(gates[0]!, undefined)
      assert.isTrue(Exit.isSuccess((yield* Fiber.join(leader))[0]!))
      const thrown = yield* Fiber.join(gathered)
      allDie(thrown)
      assert.strictEqual((Cause.squash((thrown[0] as Exit.Failure<unknown, unknown>).cause) as Error).message, "a bug in the backend")

      // A batch that fails with something that is no Failure, while two more gather behind it.
      broken = "fails with no Failure"
      const held = yield* appendAll([4])
      yield* Effect.yieldNow
      const behind = yield* appendAll([5, 6])
      yield* Effect.yieldNow
      yield* Deferred.succeed(gates[1]!, undefined)
      allDie([...(yield* Fiber.join(held)), ...(yield* Fiber.join(behind))])

      broken = undefined
      assert.strictEqual((yield* log.append(session, "x", 7)).seq, 1)
      assert.deepStrictEqual(inner.entries.map((e) => e.data), [0, 7])
    }))

  it.effect("a read whose backend skips a seq fails as corrupt, naming the seq", () =>
    Effect.gen(function*() {
      const { backend, entries } = arrayBackend()
      const log = yield* SessionLog.make(backend)
      yield* log.append(session, "x", 1)
      yield* log.append(session, "x", 2)
      entries.splice(0, 1)
      const error = failureOf(yield* Effect.exit(Stream.runCollect(log.read(session))))
      assert.instanceOf(error.reason, Corrupt)
      assert.strictEqual(error.method, "read")
      assert.strictEqual(error.session, "core")
      assert.strictEqual(error.reason.seq, 0)
      assert.strictEqual(error.message, "SessionLog.read(core): corrupt log at seq 0: seq 1 where 0 was expected")
    }))

  it.effect("maps a foreign failure to a storage failure that keeps it as the cause; sessions are valid ids", () =>
    Effect.gen(function*() {
      const cause = new Error("EIO: i/o error, write")
      const log = yield* SessionLog.make({ ...arrayBackend().backend, append: () => Effect.fail(cause) })
      const error = failureOf(yield* Effect.exit(log.append(session, "x", 1)))
      assert.strictEqual(error.reason._tag, "StorageFailure")
      assert.strictEqual(error.cause, cause)
      assert.include(error.message, "EIO")

      const { backend } = arrayBackend()
      const listed = yield* SessionLog.make(backend)
      yield* listed.append(session, "x", 1)
      assert.deepStrictEqual(yield* listed.sessions, [session])
    }))

  it.effect("publishes what other processes announce, each entry once, after local commits", () =>
    Effect.gen(function*() {
      const { backend, entries } = arrayBackend()
      const announce = yield* Deferred.make<void>()
      const log = yield* SessionLog.make({
        ...backend,
        announcements: Effect.succeed(Stream.fromEffect(Deferred.await(announce)).pipe(
          Stream.flatMap(() => Stream.make({ session, seq: 1 }, { session, seq: 1 }, { session, seq: 2 }))
        ))
      })
      const committed = yield* log.subscribe
      const seen = yield* committed.pipe(Stream.take(3), Stream.runCollect, Effect.forkChild)
      yield* log.append(session, "local", 0)
      // Another process appends seqs 1 and 2 straight to the store, then announces them.
      entries.push(SessionEvent.makeEntry("remote", 1, 0, 1), SessionEvent.makeEntry("remote", 2, 0, 2))
      yield* Deferred.succeed(announce, undefined)
      assert.deepStrictEqual((yield* Fiber.join(seen)).map((c) => [c.entry.type, c.entry.seq]), [
        ["local", 0],
        ["remote", 1],
        ["remote", 2]
      ])
    }))
})

describe("SessionLog.make: refusals and failures name the operation, the session and what happened", () => {
  /** A backend whose every primitive fails with `failure` once it is set; `calls` counts what reached it. */
  const failing = () => {
    const { backend, entries } = arrayBackend()
    const state: { failure: SessionLog.Failure | undefined; calls: number } = { failure: undefined, calls: 0 }
    const counted = <A>(ok: () => A, failed: (failure: SessionLog.Failure) => A) => {
      state.calls++
      return state.failure === undefined ? ok() : failed(state.failure)
    }
    const wrapped: SessionLog.Backend = {
      append: (s, batch) => counted(() => backend.append(s, batch), Effect.fail),
      read: (s, fromSeq) => Stream.suspend(() => counted(() => backend.read(s, fromSeq), Stream.fail)),
      sessions: Effect.suspend(() => counted(() => backend.sessions, Effect.fail))
    }
    return { backend: wrapped, entries, state }
  }

  it.effect("an id that got around the type is refused before the backend is asked", () =>
    Effect.gen(function*() {
      const { backend, state } = failing()
      const log = yield* SessionLog.make(backend)
      const hostile = "../etc" as SessionId.SessionId
      const appended = failureOf(yield* Effect.exit(log.append(hostile, "x", 1)))
      const read = failureOf(yield* Effect.exit(Stream.runCollect(log.read(hostile))))
      for (const [error, method] of [[appended, "append"], [read, "read"]] as const) {
        assert.instanceOf(error.reason, InvalidSessionId)
        assert.strictEqual(error.method, method)
        assert.strictEqual(error.session, "\"../etc\"")
        assert.strictEqual(error.message, `SessionLog.${method}("../etc"): invalid session id: "../etc" is not a SessionId`)
      }
      assert.strictEqual(state.calls, 0)
    }))

  it.effect("a payload JSON can't hold is refused with where in it, before the backend is asked", () =>
    Effect.gen(function*() {
      const { backend, state } = failing()
      const log = yield* SessionLog.make(backend)
      const error = failureOf(yield* Effect.exit(log.append(session, "x", { todos: [{ n: Number.NaN }] })))
      assert.instanceOf(error.reason, InvalidPayload)
      assert.strictEqual(error.method, "append")
      assert.strictEqual(error.session, "core")
      assert.strictEqual(error.message, "SessionLog.append(core): payload can't be stored: data.todos[0].n: NaN is not a JSON number")
      assert.strictEqual(state.calls, 0)
    }))

  it.effect("a foreign failure of each primitive is a storage failure of that operation, the failure kept as its cause", () =>
    Effect.gen(function*() {
      const { backend, state } = failing()
      const log = yield* SessionLog.make(backend)
      const cause = new Error("connection reset")
      state.failure = cause
      const errors = [
        failureOf(yield* Effect.exit(log.append(session, "x", 1))),
        failureOf(yield* Effect.exit(Stream.runCollect(log.read(session)))),
        failureOf(yield* Effect.exit(log.sessions))
      ]
      assert.deepStrictEqual(errors.map((e) => [e.method, e.session, e.reason._tag, e.message]), [
        ["append", "core", "StorageFailure", "SessionLog.append(core): storage failed: connection reset"],
        ["read", "core", "StorageFailure", "SessionLog.read(core): storage failed: connection reset"],
        ["sessions", undefined, "StorageFailure", "SessionLog.sessions(): storage failed: connection reset"]
      ])
      for (const error of errors) assert.strictEqual(error.cause, cause)
    }))

  it.effect("a backend's reason becomes the log's error with that reason; a log error of its own passes unchanged", () =>
    Effect.gen(function*() {
      const { backend, state } = failing()
      const log = yield* SessionLog.make(backend)
      const locked = new Locked({ detail: "held by pid 7" })
      state.failure = locked
      const error = failureOf(yield* Effect.exit(log.append(session, "x", 1)))
      assert.strictEqual(error.reason, locked)
      assert.strictEqual(error.message, "SessionLog.append(core): session is locked: held by pid 7")
      assert.notProperty(error, "cause")
      const own = SessionLogError.fromReason({ method: "append", session: "elsewhere", reason: locked })
      state.failure = own
      assert.strictEqual(failureOf(yield* Effect.exit(log.append(session, "x", 1))), own)
      assert.strictEqual(failureOf(yield* Effect.exit(Stream.runCollect(log.read(session)))), own)
    }))

  it.effect("sessions lists the names that are session ids, sorted", () =>
    Effect.gen(function*() {
      const log = yield* SessionLog.make({
        ...arrayBackend().backend,
        sessions: Effect.succeed(["b", "not a valid id!", "a", "../c", "c", ".lock", "a.tmp"])
      })
      assert.deepStrictEqual(yield* log.sessions, ["a", "b", "c"].map((s) => SessionId.decodeSync(s)))
    }))
})

describe("SessionLog.toError", () => {
  it("says plainly what a system error means, names its code and where, and keeps it as the cause", () => {
    const cases = [
      ["ENOSPC", "DiskFull", "the disk is full"],
      ["EROFS", "ReadOnly", "the file system is read-only"],
      ["EACCES", "PermissionDenied", "permission denied"],
      ["EDQUOT", "QuotaExceeded", "the disk quota is exceeded"],
      ["EIO", "IoError", "I/O error"]
    ] as const
    for (const [code, kind, plain] of cases) {
      const cause = systemError(code, "writeAll", "/data/s.jsonl")
      const error = SessionLog.toError("append", "s")(cause)
      assert.deepInclude(error.reason, { _tag: "StorageFailure", kind })
      assert.include(error.message, plain)
      assert.include(error.message, code)
      assert.include(error.message, "/data/s.jsonl")
      assert.notInclude(error.message, "Unknown:")
      assert.strictEqual(error.cause, cause)
    }
    const descriptor = SessionLog.toError("append", "s")(systemError("ENOSPC", "writeAll", 21))
    assert.include(descriptor.message, "file descriptor 21")
  })

  it("a failure it has no words for keeps its own message, as kind Unknown", () => {
    const odd = SessionLog.toError("read")(systemError("EWEIRD", "open", "/x"))
    assert.deepInclude(odd.reason, { _tag: "StorageFailure", kind: "Unknown" })
    assert.include(odd.message, "EWEIRD")
    const foreign = SessionLog.toError("read")(new Error("connection reset"))
    assert.deepInclude(foreign.reason, { _tag: "StorageFailure", kind: "Unknown", detail: "connection reset" })
  })
})
