/**
 * 1. Tool call cost: decode + validate + append to the in-memory log + projection update, for lists
 * of 3, 30 and 300 items, against the reference design's approach: the same checks as a plain
 * synchronous loop with a plain array as the log.
 */
import { Effect, Layer, ManagedRuntime } from "effect"
import * as AgentSession from "../../src/todo/AgentSession.ts"
import * as ProjectionStore from "../../src/projection/ProjectionStore.ts"
import * as SessionId from "../../src/log/SessionId.ts"
import * as SessionLog from "../../src/log/SessionLog.ts"
import * as TodoPolicy from "../../src/todo/TodoPolicy.ts"
import * as TodoWrite from "../../src/todo/TodoWrite.ts"
import { type Comparison, compare, timeBatch, timeRun } from "./harness.ts"
import * as TodoProjection from "../../src/todo/TodoProjection.ts"
import * as TodoEvents from "../../src/todo/TodoEvents.ts"

const args = (items: number) => ({
  todos: Array.from({ length: items }, (_, i) => ({
    content: `  Step ${i}: do the ${i}th thing carefully `,
    status: i === 0 ? "in_progress" : i < items / 2 ? "completed" : "pending"
  }))
})

// The baseline: what a harness without Effect does, check for check (one line of plain text that
// shows something; duplicates compared without default-ignorables, NFKC, case-folded).
type Item = { content: string; status: string }
const statuses = new Set(["pending", "in_progress", "completed"])
const unprintable = /[\p{Cc}\u2028\u2029\u202a-\u202e\u2066-\u2069]/u
const visible = /[^\s\p{Default_Ignorable_Code_Point}]/u
const ignorable = /\p{Default_Ignorable_Code_Point}/gu
const baselineLog: Array<{ type: string; seq: number; time: number; data: unknown }> = []
let baselineCurrent: Array<Item> | null = null
const baselineCall = (input: unknown): string => {
  if (typeof input !== "object" || input === null || Array.isArray(input)) throw new Error("arguments must be an object")
  const keys = Object.keys(input)
  if (keys.length !== 1 || keys[0] !== "todos") throw new Error("unexpected property")
  const raw = (input as { todos: unknown }).todos
  if (!Array.isArray(raw)) throw new Error("todos must be an array")
  if (raw.length > 100 * 3) throw new Error("too many items")
  const todos: Array<Item> = []
  const seen = new Set<string>()
  let inProgress = 0
  for (const item of raw) {
    if (typeof item !== "object" || item === null) throw new Error("item must be an object")
    const itemKeys = Object.keys(item)
    if (itemKeys.length !== 2 || !("content" in item) || !("status" in item)) throw new Error("bad item keys")
    const { content, status } = item as Item
    if (typeof content !== "string" || !statuses.has(status)) throw new Error("bad item")
    const trimmed = content.trim()
    if (trimmed.length === 0 || trimmed.length > 1000) throw new Error("bad content")
    if (!visible.test(trimmed) || unprintable.test(trimmed)) throw new Error("bad content")
    const key = trimmed.replace(ignorable, "").normalize("NFKC").toLowerCase().toUpperCase().toLowerCase()
      .replace(/\s+/g, " ")
    if (seen.has(key)) throw new Error("duplicate")
    seen.add(key)
    if (status === "in_progress") inProgress++
    todos.push({ content: trimmed, status })
  }
  if (inProgress > 1) throw new Error("too many in_progress")
  baselineLog.push({ type: "todo/write", seq: baselineLog.length, time: Date.now(), data: { todos } })
  baselineCurrent = todos
  return `Updated todo list: ${todos.length} items.`
}

export const run = async (): Promise<ReadonlyArray<Comparison>> => {
  const session = SessionId.decodeSync("bench")
  const runtime = ManagedRuntime.make(
    ProjectionStore.layer.pipe(
      Layer.provideMerge(TodoEvents.layerChecked),
      Layer.provideMerge(SessionLog.layerMemory),
      Layer.merge(TodoPolicy.layer({ allowParallelInProgress: false, maxItems: 300 }))
    )
  )
  const results: Array<Comparison> = []
  for (const items of [3, 30, 300]) {
    const input = args(items)
    const batch = items === 300 ? 200 : 2000
    const calls = Effect.gen(function*() {
      const store = yield* ProjectionStore.ProjectionStore
      for (let i = 0; i < batch; i++) {
        yield* TodoWrite.execute(input)
        yield* store.get(TodoProjection.todos, session)
      }
    }).pipe(AgentSession.provide(session))
    results.push(
      await compare({
        name: `tool call, ${items} items`,
        rounds: 15,
        target: () => timeRun(() => runtime.runPromise(calls), batch),
        baseline: () => timeBatch(() => baselineCall(input), batch),
        goal: items === 30 ? { max: 3 } : undefined
      })
    )
  }
  await runtime.dispose()
  if (baselineCurrent === null) throw new Error("the baseline never ran")
  baselineLog.length = 0
  return results
}
