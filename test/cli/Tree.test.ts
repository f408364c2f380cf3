import { assert, describe, it } from "@effect/vitest"
import * as SessionId from "../../src/log/SessionId.ts"
import * as Tree from "../../src/cli/Tree.ts"

const id = SessionId.decodeSync

describe("show --tree rendering", () => {
  it("indents each sub-agent's summary and checklist under its parent", () => {
    const text = Tree.render({
      session: id("root"),
      status: null,
      todos: [{ content: "Coordinate", status: "in_progress" }],
      children: [
        {
          session: id("a"),
          status: "completed",
          todos: [{ content: "Parse", status: "completed" }],
          children: [{ session: id("a1"), status: "interrupted", todos: null, children: [] }]
        },
        { session: id("b"), status: "running", todos: [], children: [] }
      ]
    })
    assert.strictEqual(
      text,
      [
        "Session root",
        "[>] Coordinate",
        "0/1 completed, 1 in progress, 0 pending",
        "",
        "-- sub-agent a: 1/1 completed (finished)",
        "   [x] Parse",
        "   1/1 completed, 0 in progress, 0 pending",
        "",
        "   -- sub-agent a1: no plan yet (interrupted)",
        "      (no plan in this turn)",
        "",
        "-- sub-agent b: 0/0 completed",
        "   (empty list)"
      ].join("\n")
    )
  })
})
