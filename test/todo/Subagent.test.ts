import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Fiber, Layer, Option, Stream } from "effect"
import { CheckedSessionLog } from "../../src/log/CheckedSessionLog.ts"
import * as SessionId from "../../src/log/SessionId.ts"
import * as SessionLog from "../../src/log/SessionLog.ts"
import type { SessionLogError } from "../../src/log/SessionLogError.ts"
import * as ProjectionStore from "../../src/projection/ProjectionStore.ts"
import * as AgentSession from "../../src/todo/AgentSession.ts"
import * as Subagent from "../../src/todo/Subagent.ts"
import type { SubagentError } from "../../src/todo/SubagentError.ts"
import * as SubagentEvents from "../../src/todo/SubagentEvents.ts"
import * as TodoPolicy from "../../src/todo/TodoPolicy.ts"
import * as TodoWrite from "../../src/todo/TodoWrite.ts"

const id = SessionId.decodeSync
const parent = id("parent")
const child = id("child")

const Env = ProjectionStore.layer.pipe(
  Layer.provideMerge(SubagentEvents.layerChecked),
  Layer.provideMerge(SessionLog.layerMemory),
  Layer.merge(TodoPolicy.layer({ allowParallelInProgress: false }))
)

const events = (session: SessionId.SessionId) =>
  Effect.gen(function*() {
    const log = yield* CheckedSessionLog
    return (yield* Stream.runCollect(log.read(session))).map((e) => [e.type, e.data])
  })

const write = (content: string) => TodoWrite.execute({ todos: [{ content, status: "in_progress" }] })

describe("Subagent.run", () => {
  it.effect("links the child in both logs, runs as the child, and records a completed end", () =>
    Effect.gen(function*() {
      const seen = yield* Effect.gen(function*() {
        yield* write("Child step")
        return (yield* AgentSession.AgentSession).sessionId
      }).pipe(Subagent.run(child), AgentSession.provide(parent))
      assert.strictEqual(seen, child)
      assert.deepStrictEqual(yield* events(parent), [
        ["subagent/start", { child }],
        ["subagent/end", { child, reason: "completed" }]
      ])
      assert.deepStrictEqual(yield* events(child), [
        ["subagent/parent", { parent }],
        ["todo/write", { todos: [{ content: "Child step", status: "in_progress" }] }]
      ])
    }).pipe(Effect.provide(Env)))

  it.effect("records an error end and keeps the child's own failure", () =>
    Effect.gen(function*() {
      const exit = yield* Effect.exit(Effect.fail("boom").pipe(Subagent.run(child), AgentSession.provide(parent)))
      assert.deepStrictEqual(Exit.findErrorOption(exit), Option.some("boom"))
      assert.deepStrictEqual((yield* events(parent)).at(-1), ["subagent/end", { child, reason: "error" }])
      assert.deepStrictEqual((yield* events(child))[0], ["subagent/parent", { parent }])
    }).pipe(Effect.provide(Env)))

  it.effect("records an interrupted end when the child is interrupted", () =>
    Effect.gen(function*() {
      const fiber = yield* Effect.never.pipe(Subagent.run(child), AgentSession.provide(parent), Effect.forkChild)
      yield* Effect.yieldNow
      yield* Fiber.interrupt(fiber)
      assert.deepStrictEqual(yield* events(parent), [
        ["subagent/start", { child }],
        ["subagent/end", { child, reason: "interrupted" }]
      ])
    }).pipe(Effect.provide(Env)))

  it.effect("a second run of the same child starts a new run; the child names its parent once", () =>
    Effect.gen(function*() {
      yield* Effect.void.pipe(Subagent.run(child), AgentSession.provide(parent))
      yield* Effect.void.pipe(Subagent.run(child), AgentSession.provide(parent))
      assert.deepStrictEqual((yield* events(parent)).map(([type]) => type), [
        "subagent/start",
        "subagent/end",
        "subagent/start",
        "subagent/end"
      ])
      assert.deepStrictEqual((yield* events(child)).map(([type]) => type), ["subagent/parent"])
    }).pipe(Effect.provide(Env)))
})

describe("Subagent.link", () => {
  const reasonOf = <A, R>(effect: Effect.Effect<A, SubagentError | SessionLogError, R>) =>
    Effect.map(Effect.flip(effect), (error) => error._tag === "SubagentError" ? error.reason._tag : error._tag)

  it.effect("refuses a session as its own sub-agent or below its own descendant, writing nothing", () =>
    Effect.gen(function*() {
      assert.strictEqual(yield* reasonOf(Subagent.link(parent, parent)), "Cycle")
      yield* Subagent.link(parent, child)
      const grandchild = id("grandchild")
      yield* Subagent.link(child, grandchild)
      const error = yield* Effect.flip(Subagent.link(grandchild, parent))
      assert.strictEqual(error.reason._tag, "Cycle")
      assert.include(error.message, "parent -> grandchild -> child -> parent")
      assert.deepStrictEqual((yield* events(grandchild)).map(([type]) => type), ["subagent/parent"])
      assert.deepStrictEqual((yield* events(parent)).map(([type]) => type), ["subagent/start"])
    }).pipe(Effect.provide(Env)))

  it.effect("bounds depth and fan-out, with errors that say so", () =>
    Effect.gen(function*() {
      const limits = { maxDepth: 2, maxChildren: 2 }
      yield* Subagent.link(id("a"), id("b"), limits)
      yield* Subagent.link(id("b"), id("c"), limits)
      const deep = yield* Effect.flip(Subagent.link(id("c"), id("d"), limits))
      assert.strictEqual(deep.reason._tag, "TooDeep")
      assert.include(deep.message, "3 levels deep, more than the 2 allowed")
      yield* Subagent.link(id("a"), id("b2"), limits)
      const wide = yield* Effect.flip(Subagent.link(id("a"), id("b3"), limits))
      assert.strictEqual(wide.reason._tag, "TooManyChildren")
      assert.include(wide.message, "3 sub-agents, more than the 2 allowed")
      assert.deepStrictEqual(yield* events(id("d")), [])
      assert.deepStrictEqual(yield* events(id("b3")), [])
      // re-linking an existing child is not one too many
      yield* Subagent.link(id("a"), id("b"), limits)
    }).pipe(Effect.provide(Env)))

  it.effect("refuses a child that has events of its own or another parent", () =>
    Effect.gen(function*() {
      yield* write("Own work").pipe(AgentSession.provide(child))
      assert.strictEqual(yield* reasonOf(Subagent.link(parent, child)), "NotNew")
      yield* Subagent.link(parent, id("other"))
      assert.strictEqual(yield* reasonOf(Subagent.link(id("third"), id("other"))), "OtherParent")
    }).pipe(Effect.provide(Env)))

  it.effect("a stored loop of links is reported, not followed forever", () =>
    Effect.gen(function*() {
      const log = yield* CheckedSessionLog
      yield* log.append(id("x"), SubagentEvents.parent.type, { parent: "y" })
      yield* log.append(id("y"), SubagentEvents.parent.type, { parent: "x" })
      const error = yield* Effect.flip(Subagent.ancestors(id("x")))
      assert.strictEqual(error.reason._tag, "Cycle")
    }).pipe(Effect.provide(Env)))

  it.effect("the link events have their own invariants; logs without them load as before", () =>
    Effect.gen(function*() {
      const log = yield* CheckedSessionLog
      const bad = yield* Effect.flip(log.append(parent, SubagentEvents.start.type, { child: "../etc" }))
      assert.strictEqual(bad.reason._tag, "InvariantViolation")
      const extra = yield* Effect.flip(log.append(parent, SubagentEvents.end.type, { child: "c", reason: "gone" }))
      assert.strictEqual(extra.reason._tag, "InvariantViolation")
      yield* write("Plain").pipe(AgentSession.provide(parent))
      assert.deepStrictEqual(yield* Subagent.ancestors(parent), [])
    }).pipe(Effect.provide(Env)))
})
