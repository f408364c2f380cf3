import { assert, describe, it } from "@effect/vitest"
import * as TodoOverview from "../../src/todo/TodoOverview.ts"
import * as TodoProjection from "../../src/todo/TodoProjection.ts"
import * as SessionEvent from "../../src/log/SessionEvent.ts"

const entries = [
  SessionEvent.makeEntry("turn/start", 0, 100, {}),
  SessionEvent.makeEntry("todo/write", 1, 110, { todos: [{ content: "a", status: "in_progress" }] }),
  SessionEvent.makeEntry("note", 2, 120, { anything: true }),
  SessionEvent.makeEntry("turn/end", 3, 130, { reason: "completed" }),
  SessionEvent.makeEntry("turn/start", 4, 140, {})
]

describe("TodoOverview", () => {
  it("folds the list with the todos projection's step, and counts events and times", () => {
    let overview = TodoOverview.overview.initial
    let todos = TodoProjection.todos.initial
    assert.deepStrictEqual(overview, { todos: null, events: 0, lastWrite: null, lastActivity: null })
    for (const entry of entries) {
      overview = TodoOverview.overview.step(overview, entry)
      todos = TodoProjection.todos.step(todos, entry)
      assert.strictEqual(overview.todos, todos, `after seq ${entry.seq}`)
      assert.strictEqual(overview.events, entry.seq + 1)
      assert.strictEqual(overview.lastActivity, entry.time)
    }
    assert.strictEqual(overview.lastWrite, 110, "the last todo/write, not the last event")
    assert.strictEqual(overview.todos, null, "a new turn clears the list")
  })

  it("changes version when the todos fold does", () => {
    assert.strictEqual(Math.floor(TodoOverview.overview.version / 100), TodoProjection.todos.version)
  })
})
