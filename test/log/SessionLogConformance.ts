/**
 * The contract every `SessionLog` backend keeps. Each backend's test file runs this suite with a
 * factory that builds a fresh, empty backend for every test.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Fiber, Layer, Option, Scheduler, Scope, Stream } from "effect"
import { TestClock } from "effect/testing"
import * as SessionId from "../../src/log/SessionId.ts"
import * as SessionInvariant from "../../src/log/SessionInvariant.ts"
import * as SessionLog from "../../src/log/SessionLog.ts"
import type { SessionLogError } from "../../src/log/SessionLogError.ts"
import * as TodoEvents from "../../src/todo/TodoEvents.ts"

const id = SessionId.decodeSync

export const failureOf = <A, E>(exit: Exit.Exit<A, E>): E => {
  const error = Exit.findErrorOption(exit)
  if (Option.isNone(error)) throw new Error(`expected a failure, got ${String(exit).slice(0, 200)}`)
  return error.value
}

export const readAll = (log: SessionLog.SessionLog["Service"], session: SessionId.SessionId, fromSeq?: number) =>
  Stream.runCollect(log.read(session, { fromSeq }))

const write = (content: string, status = "pending") => ({ todos: [{ content, status }] })

export const conformance = (name: string, backend: () => Layer.Layer<SessionLog.SessionLog, unknown>) =>
  describe(`SessionLog conformance: ${name}`, () => {
    const run = <A, E>(body: (log: SessionLog.SessionLog["Service"]) => Effect.Effect<A, E>) =>
      Effect.flatMap(SessionLog.SessionLog, body).pipe(Effect.provide(backend()))

    it.effect("appends in order with contiguous seqs and the time from Clock", () =>
      run((log) =>
        Effect.gen(function*() {
          const s = id("order")
          const first = yield* log.append(s, "turn/start", {})
          yield* TestClock.adjust("5 seconds")
          const second = yield* log.append(s, "todo/write", write("a"))
          const third = yield* log.append(s, "turn/end", { reason: "completed" })
          assert.deepStrictEqual([first.seq, second.seq, third.seq], [0, 1, 2])
          assert.strictEqual(second.time - first.time, 5000)
          const entries = yield* readAll(log, s)
          assert.deepStrictEqual(entries.map((e) => [e.type, e.seq]), [["turn/start", 0], ["todo/write", 1], [
            "turn/end",
            2
          ]])
          assert.deepStrictEqual(entries[1], second)
          assert.deepStrictEqual((yield* readAll(log, s, 2)).map((e) => e.seq), [2])
          assert.deepStrictEqual(yield* readAll(log, id("unknown-session")), [])
        })
      ))

    it.effect("keeps sessions apart and lists them", () =>
      run((log) =>
        Effect.gen(function*() {
          yield* log.append(id("a"), "x", 1)
          yield* log.append(id("b"), "x", 2)
          yield* log.append(id("a"), "x", 3)
          assert.deepStrictEqual((yield* readAll(log, id("a"))).map((e) => [e.seq, e.data]), [[0, 1], [1, 3]])
          assert.deepStrictEqual((yield* readAll(log, id("b"))).map((e) => [e.seq, e.data]), [[0, 2]])
          assert.deepStrictEqual([...(yield* log.sessions)].sort(), ["a", "b"])
        })
      ))

    it.effect("stores event types it doesn't know untouched", () =>
      run((log) =>
        Effect.gen(function*() {
          const s = id("unknown-types")
          const data = { nested: { list: [1, "two", null, true, { deep: "é ✓ \u2028 \"q\"" }] }, n: -1.5 }
          yield* log.append(s, "tool/bash.output", data)
          yield* log.append(s, "x", "plain string")
          yield* log.append(s, "y", null)
          const entries = yield* readAll(log, s)
          assert.deepStrictEqual(entries.map((e) => [e.type, e.data]), [["tool/bash.output", data], ["x", "plain string"], [
            "y",
            null
          ]])
        })
      ))

    it.effect("stores an immutable snapshot of the payload", () =>
      run((log) =>
        Effect.gen(function*() {
          const s = id("snapshot")
          const todos = [{ content: "a", status: "pending" }]
          const appended = yield* log.append(s, "todo/write", { todos })
          todos.push({ content: "b", status: "pending" })
          todos[0]!.content = "changed"
          const [stored] = yield* readAll(log, s)
          assert.deepStrictEqual(stored!.data, write("a"))
          assert.deepStrictEqual(appended.data, write("a"))
          // nor does mutating what a read or the append returned (frozen, or a copy)
          for (const entry of [stored!, appended]) {
            try {
              ;(entry.data as { todos: Array<unknown> }).todos.push("x")
            } catch {
              // frozen
            }
          }
          assert.deepStrictEqual((yield* readAll(log, s))[0]!.data, write("a"))
        })
      ))

    it.effect("refuses a payload JSON can't hold, and writes nothing", () =>
      run((log) =>
        Effect.gen(function*() {
          const s = id("not-json")
          const cyclic: Record<string, unknown> = {}
          cyclic.self = cyclic
          const error = failureOf(yield* Effect.exit(log.append(s, "x", cyclic)))
          assert.strictEqual(error.reason._tag, "InvalidPayload")
          for (const bad of [1n, { n: Number.NaN }, { at: new Date(0) }, [1, undefined], () => 1]) {
            assert.strictEqual(failureOf(yield* Effect.exit(log.append(s, "x", bad))).reason._tag, "InvalidPayload")
          }
          // an undefined property is absent, as JSON has it
          yield* log.append(s, "absent", { a: 1, b: undefined })
          assert.strictEqual((yield* log.append(s, "x", 1)).seq, 1)
          assert.deepStrictEqual((yield* readAll(log, s)).map((e) => e.data), [{ a: 1 }, 1])
        })
      ))

    it.effect("text that only looks like an escape is stored as written: a backslash before u0000 is not NUL", () =>
      run((log) =>
        Effect.gen(function*() {
          const s = id("escapes")
          const data = write("Handle the \\u0000 escape and \\ud800 too")
          assert.notInclude(data.todos[0]!.content, "\u0000")
          yield* log.append(s, "todo/write", data)
          yield* log.append(s, "keys", { "\\u0000": "\\" })
          assert.deepStrictEqual((yield* readAll(log, s)).map((e) => e.data), [data, { "\\u0000": "\\" }])
        })
      ))

    it.effect("refuses a lone surrogate anywhere in the payload or the type, on every backend alike", () =>
      run((log) =>
        Effect.gen(function*() {
          const s = id("surrogates")
          const frozen = Object.freeze({ text: Object.freeze(["fine", "x\udc00"]) })
          for (const [type, bad] of [
            ["todo/write", write("x\ud800y")],
            ["x", { "key\udfff": 1 }],
            ["x", frozen],
            ["x\ud800", {}]
          ] as const) {
            const error = failureOf(yield* Effect.exit(log.append(s, type, bad)))
            assert.strictEqual(error.reason._tag, "InvalidPayload")
            assert.include(error.message, "lone surrogate")
          }
          // a well-formed pair is one character, and fine
          yield* log.append(s, "todo/write", write("emoji \ud83d\ude00"))
          assert.deepStrictEqual((yield* readAll(log, s)).map((e) => [e.seq, e.data]), [[0, write("emoji 😀")]])
        })
      ))

    it.effect("an invariant veto fails the append and leaves the log unchanged", () =>
      run((raw) =>
        Effect.gen(function*() {
          const log = SessionInvariant.wrap(raw, TodoEvents.invariants)
          const s = id("veto")
          yield* log.append(s, "todo/write", write("a"))
          const error = failureOf(yield* Effect.exit(log.append(s, "todo/write", write("  untrimmed "))))
          assert.strictEqual(error._tag, "SessionLogError")
          assert.strictEqual(error.reason._tag, "InvariantViolation")
          assert.strictEqual(error.session, "veto")
          assert.deepStrictEqual((yield* readAll(raw, s)).map((e) => e.data), [write("a")])
          assert.strictEqual((yield* log.append(s, "todo/write", write("b"))).seq, 1)
        })
      ))

    it.effect("a stored event that breaks an invariant fails the load, naming session, seq and rule", () =>
      run((raw) =>
        Effect.gen(function*() {
          const log = SessionInvariant.wrap(raw, TodoEvents.invariants)
          const s = id("bad-load")
          yield* raw.append(s, "turn/start", {})
          yield* raw.append(s, "todo/write", { todos: [{ content: "a", status: "pending" }, { content: "a", status: "done" }] })
          const error: SessionLogError = failureOf(yield* Effect.exit(readAll(log, s)))
          assert.strictEqual(error.session, "bad-load")
          assert.strictEqual(error.reason._tag, "InvariantViolation")
          if (error.reason._tag === "InvariantViolation") {
            assert.strictEqual(error.reason.seq, 1)
            assert.strictEqual(error.reason.rule, TodoEvents.writeInvariant.rule)
          }
          assert.include(error.message, "seq 1")
        })
      ))

    it.effect("a log written under the parallel policy loads under any policy", () =>
      run((raw) =>
        Effect.gen(function*() {
          const log = SessionInvariant.wrap(raw, TodoEvents.invariants)
          const s = id("parallel")
          const todos = [{ content: "a", status: "in_progress" }, { content: "b", status: "in_progress" }]
          yield* log.append(s, "todo/write", { todos })
          assert.deepStrictEqual((yield* readAll(log, s)).map((e) => e.data), [{ todos }])
        })
      ))

    it.effect("concurrent appends from many fibers get contiguous seqs and lose nothing", () =>
      run((log) =>
        Effect.gen(function*() {
          const sessions = ["c0", "c1", "c2", "c3"].map((s) => id(s))
          const perSession = 50
          yield* Effect.forEach(
            Array.from({ length: perSession * sessions.length }, (_, i) => i),
            (i) => log.append(sessions[i % sessions.length]!, "n", { i }),
            { concurrency: "unbounded", discard: true }
          )
          for (const [k, s] of sessions.entries()) {
            const entries = yield* readAll(log, s)
            assert.deepStrictEqual(entries.map((e) => e.seq), Array.from({ length: perSession }, (_, i) => i))
            assert.deepStrictEqual(
              entries.map((e) => (e.data as { i: number }).i).sort((a, b) => a - b),
              Array.from({ length: perSession }, (_, i) => i * sessions.length + k)
            )
          }
        })
      ))

    it.live("an append interrupted wherever its fiber yields leaves the session appendable, its seqs contiguous", () =>
      run((log) =>
        Effect.gen(function*() {
          const s = id("interrupted")
          // A small op budget makes the appending fiber yield at every few steps: interrupted at each
          // of them in turn, including between its taking the lead of the session and its storing.
          for (let ops = 2; ops <= 24; ops++) {
            for (let yields = 0; yields <= 3; yields++) {
              const fiber = yield* Effect.forkChild(
                log.append(s, "n", { ops, yields }).pipe(Effect.provideService(Scheduler.MaxOpsBeforeYield, ops))
              )
              for (let i = 0; i < yields; i++) yield* Effect.yieldNow
              yield* Fiber.interrupt(fiber)
              const next = yield* Effect.exit(log.append(s, "n", { after: [ops, yields] }).pipe(Effect.timeout("5 seconds")))
              assert.isTrue(Exit.isSuccess(next), `an append after one interrupted (ops ${ops}, ${yields} yields) was answered`)
            }
          }
          const entries = yield* readAll(log, s)
          assert.deepStrictEqual(entries.map((e) => e.seq), entries.map((_, i) => i))
          assert.isAtLeast(entries.length, 23 * 4, "every append made after an interrupted one was stored")
        })
      ), 60_000)

    it.live("once its layer has closed, an append fails, saying the log is closed", () =>
      Effect.gen(function*() {
        const scope = yield* Scope.make()
        const log = yield* SessionLog.SessionLog.pipe(Effect.provide(yield* Layer.buildWithScope(backend(), scope)))
        yield* log.append(id("closing"), "n", {})
        yield* Scope.close(scope, Exit.void)
        for (const s of [id("closing"), id("never-opened")]) {
          const error = failureOf(yield* Effect.exit(log.append(s, "n", {}).pipe(Effect.timeout("5 seconds"))))
          assert.strictEqual(error._tag, "SessionLogError")
          assert.match((error as SessionLogError).message, /the log is closed/)
        }
      }))

    it.effect("subscribers see every entry committed after they subscribe", () =>
      run((log) =>
        Effect.scoped(Effect.gen(function*() {
          const s = id("live")
          yield* log.append(s, "before", {})
          const committed = yield* log.subscribe
          const fiber = yield* committed.pipe(Stream.take(3), Stream.runCollect, Effect.forkChild)
          yield* log.append(s, "a", {})
          yield* log.append(id("other"), "b", {})
          yield* log.append(s, "c", {})
          const seen = yield* Fiber.join(fiber)
          assert.deepStrictEqual(seen.map((c) => [c.session, c.entry.type, c.entry.seq]), [["live", "a", 1], [
            "other",
            "b",
            0
          ], ["live", "c", 2]])
        }))
      ))

    it.effect("known event payloads round-trip through their schemas", () =>
      run((log) =>
        Effect.gen(function*() {
          const s = id("known")
          yield* log.append(s, TodoEvents.turnStart.type, {})
          yield* log.append(s, TodoEvents.turnEnd.type, { reason: "interrupted" })
          const [, end] = yield* readAll(log, s)
          assert.deepStrictEqual(end!.data, { reason: "interrupted" })
        })
      ))
  })
