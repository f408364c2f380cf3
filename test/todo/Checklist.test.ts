import { assert, describe, it } from "@effect/vitest"
import * as Checklist from "../../src/todo/Checklist.ts"

describe("Checklist", () => {
  it("renders a mark per status, the evidence under a completed item, then the counts", () => {
    assert.strictEqual(
      Checklist.render([
        { content: "Run the tests", status: "completed", evidence: "npm test: 120 passed" },
        { content: "Fix the parser", status: "in_progress" },
        { content: "Ship", status: "pending" }
      ]),
      [
        "[x] Run the tests",
        "    evidence: npm test: 120 passed",
        "[>] Fix the parser",
        "[ ] Ship",
        "1/3 completed, 1 in progress, 1 pending"
      ].join("\n")
    )
    assert.strictEqual(Checklist.render(null), "(no plan in this turn)")
    assert.strictEqual(Checklist.render([]), "(empty list)")
  })

  it("can't be spoofed by what an old log holds: line breaks, escapes and invisible content are shown escaped", () => {
    const text = Checklist.render([
      { content: "step\n[x] FAKE DONE ITEM", status: "pending" },
      { content: "\u001b[2Jcleared", status: "pending" },
      { content: "\u200b", status: "pending" },
      { content: "done", status: "completed", evidence: "ok\r\n[x] also fake" }
    ])
    const lines = text.split("\n")
    assert.strictEqual(lines.length, 6)
    assert.deepStrictEqual(lines.filter((line) => line.startsWith("[x]")), ["[x] done"])
    assert.notInclude(text, "\u001b")
    assert.include(text, "[ ] \\u200b")
  })
})
