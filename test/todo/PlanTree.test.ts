import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { CheckedSessionLog } from "../../src/log/CheckedSessionLog.ts"
import * as SessionId from "../../src/log/SessionId.ts"
import * as SessionLog from "../../src/log/SessionLog.ts"
import * as ProjectionStore from "../../src/projection/ProjectionStore.ts"
import * as AgentSession from "../../src/todo/AgentSession.ts"
import * as PlanTree from "../../src/todo/PlanTree.ts"
import * as Subagent from "../../src/todo/Subagent.ts"
import * as SubagentEvents from "../../src/todo/SubagentEvents.ts"
import * as TodoPolicy from "../../src/todo/TodoPolicy.ts"
import * as TodoWrite from "../../src/todo/TodoWrite.ts"

const id = SessionId.decodeSync

const Env = ProjectionStore.layer.pipe(
  Layer.provideMerge(SubagentEvents.layerChecked),
  Layer.provideMerge(SessionLog.layerMemory),
  Layer.merge(TodoPolicy.layer({ allowParallelInProgress: true }))
)

const write = (todos: ReadonlyArray<readonly [string, "pending" | "in_progress" | "completed"]>) =>
  TodoWrite.execute({ todos: todos.map(([content, status]) => ({ content, status })) })

/** A parent with two children, the first of which has a child of its own; `b` is still running. */
const family = Effect.gen(function*() {
  yield* write([["Split the work", "completed"], ["Merge results", "pending"]])
  yield* Effect.gen(function*() {
    yield* write([["Parse", "completed"], ["Check", "in_progress"], ["Report", "pending"]])
    yield* write([["Dig", "in_progress"]]).pipe(Subagent.run(id("a1")))
  }).pipe(Subagent.run(id("a")))
  yield* Subagent.link(id("root"), id("b"))
  yield* write([["Look around", "pending"]]).pipe(AgentSession.provide(id("b")))
}).pipe(AgentSession.provide(id("root")))

describe("PlanTree", () => {
  it.effect("a parent with two children and one grandchild: lists and statuses, recursively", () =>
    Effect.gen(function*() {
      yield* family
      const tree = yield* PlanTree.get(id("root"))
      assert.strictEqual(tree.session, "root")
      assert.isNull(tree.status)
      assert.deepStrictEqual(tree.todos?.map((t) => t.content), ["Split the work", "Merge results"])
      assert.deepStrictEqual(tree.children.map((c): ReadonlyArray<unknown> => [c.session, c.status]), [["a", "completed"], ["b", "running"]])
      const [a, b] = tree.children
      assert.deepStrictEqual(a!.children.map((c): ReadonlyArray<unknown> => [c.session, c.status, c.todos]), [
        ["a1", "completed", [{ content: "Dig", status: "in_progress" }]]
      ])
      assert.deepStrictEqual(b!.children, [])
      assert.strictEqual(
        PlanTree.reminder(tree),
        [
          "sub-agent a: 1/3 completed, working on Check (finished)",
          "  sub-agent a1: 0/1 completed, working on Dig (finished)",
          "sub-agent b: 0/1 completed"
        ].join("\n")
      )
      // a subtree reads from any session
      assert.deepStrictEqual((yield* PlanTree.get(id("a"))).children.map((c) => c.session), ["a1"])
    }).pipe(Effect.provide(Env)))

  it.effect("a session without sub-agents, or a log from before they existed, is a one-node tree", () =>
    Effect.gen(function*() {
      yield* write([["Alone", "in_progress"]]).pipe(AgentSession.provide(id("solo")))
      const tree = yield* PlanTree.get(id("solo"))
      assert.deepStrictEqual(tree.children, [])
      assert.strictEqual(PlanTree.reminder(tree), "")
      assert.strictEqual(PlanTree.summary({ ...tree, todos: null, status: "running" }), "sub-agent solo: no plan yet")
    }).pipe(Effect.provide(Env)))

  it.effect("depth and fan-out beyond the bounds, and stored cycles, are clear errors", () =>
    Effect.gen(function*() {
      yield* family
      const deep = yield* Effect.flip(PlanTree.get(id("root"), { maxDepth: 1, maxChildren: 8 }))
      assert.strictEqual(deep.reason._tag, "TooDeep")
      assert.include(deep.message, "Subagent.tree(root -> a1)")
      const wide = yield* Effect.flip(PlanTree.get(id("root"), { maxDepth: 8, maxChildren: 1 }))
      assert.strictEqual(wide.reason._tag, "TooManyChildren")

      // links written by hand (another tool, a bug): b starts root, so root would be below itself
      const log = yield* CheckedSessionLog
      yield* log.append(id("b"), SubagentEvents.start.type, { child: "root" })
      const cycle = yield* Effect.flip(PlanTree.get(id("root")))
      assert.strictEqual(cycle.reason._tag, "Cycle")
      assert.include(cycle.message, "root -> b -> root")
    }).pipe(Effect.provide(Env)))
})
