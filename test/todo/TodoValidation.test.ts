import { assert, describe, it } from "@effect/vitest"
import { Result, Schema } from "effect"
import * as TodoEvents from "../../src/todo/TodoEvents.ts"
import * as Todo from "../../src/todo/Todo.ts"
import * as TodoPolicy from "../../src/todo/TodoPolicy.ts"
import * as TodoValidation from "../../src/todo/TodoValidation.ts"
import { TodoValidationError, ViolationCode } from "../../src/todo/TodoWriteError.ts"
import { fiveProblems } from "./FiveProblems.ts"

const single: TodoPolicy.Options = {
  allowParallelInProgress: false,
  requireCompletedEvidence: false,
  maxItems: TodoPolicy.defaultMaxItems,
  maxContentLength: TodoPolicy.defaultMaxContentLength
}
const parallel: TodoPolicy.Options = { ...single, allowParallelInProgress: true }

const violations = (policy: TodoPolicy.Options, input: unknown) => {
  const result = TodoValidation.validate(policy, input)
  assert.isTrue(Result.isFailure(result), "expected the input to be rejected")
  return Result.isFailure(result) ? result.failure.violations.map((v) => ({ code: v.code, path: v.path })) : []
}

describe("TodoValidation", () => {
  it("accepts a list and answers with content trimmed", () => {
    const result = TodoValidation.validate(single, {
      todos: [{ content: "  Write tests ", status: "in_progress" }, { content: "Ship\t", status: "pending" }]
    })
    assert.deepStrictEqual(Result.getOrThrow(result), [
      { content: "Write tests", status: "in_progress" },
      { content: "Ship", status: "pending" }
    ])
  })

  it("accepts an empty list", () => {
    assert.deepStrictEqual(Result.getOrThrow(TodoValidation.validate(single, { todos: [] })), [])
  })

  it("rejects empty and whitespace-only content", () => {
    assert.deepStrictEqual(violations(single, { todos: [{ content: "", status: "pending" }, { content: " \n\t", status: "pending" }] }), [
      { code: "empty_content", path: ["todos", 0, "content"] },
      { code: "empty_content", path: ["todos", 1, "content"] }
    ])
  })

  it("rejects exact and normalized duplicates", () => {
    assert.deepStrictEqual(
      violations(single, {
        todos: [
          { content: "Fix X", status: "pending" },
          { content: "Fix X", status: "completed" },
          { content: "fix  x", status: "pending" },
          { content: " FIX\u00a0X ", status: "pending" },
          { content: "ｆｉｘ x", status: "pending" }
        ]
      }),
      [1, 2, 3, 4].map((i) => ({ code: "duplicate_content" as const, path: ["todos", i, "content"] }))
    )
  })

  it("rejects two in_progress items under single-active, naming them, and accepts them under parallel", () => {
    const input = {
      todos: [
        { content: "a", status: "in_progress" },
        { content: "b", status: "in_progress" },
        { content: "c", status: "in_progress" }
      ]
    }
    const result = TodoValidation.validate(single, input)
    assert.isTrue(Result.isFailure(result))
    if (Result.isFailure(result)) {
      assert.strictEqual(result.failure.violations[0].code, "too_many_in_progress")
      assert.include(result.failure.violations[0].message, "todos[0], todos[1] and todos[2] are all in_progress")
    }
    assert.isTrue(Result.isSuccess(TodoValidation.validate(parallel, input)))
  })

  it("enforces the size bounds of the policy", () => {
    const small = { ...single, maxItems: 2, maxContentLength: 5 }
    assert.deepStrictEqual(
      violations(small, {
        todos: [{ content: "123456", status: "pending" }, { content: "b", status: "pending" }, { content: "c", status: "pending" }]
      }),
      [{ code: "too_many_items", path: ["todos"] }, { code: "content_too_long", path: ["todos", 0, "content"] }]
    )
    // bounds count characters (code points) of the trimmed content, not UTF-16 units or padding
    assert.isTrue(Result.isSuccess(TodoValidation.validate(small, { todos: [{ content: "  😀😀😀😀😀  ", status: "pending" }] })))
  })

  it("reports shape errors from the schema with their paths", () => {
    assert.deepStrictEqual(violations(single, { todos: "not a list" }), [{ code: "invalid_type", path: ["todos"] }])
    assert.deepStrictEqual(violations(single, {}), [{ code: "missing_key", path: ["todos"] }])
    assert.deepStrictEqual(violations(single, null), [{ code: "invalid_type", path: [] }])
    assert.deepStrictEqual(violations(single, { todos: [{ content: "a", status: "done" }] }), [
      { code: "invalid_status", path: ["todos", 0, "status"] }
    ])
    assert.deepStrictEqual(violations(single, { todos: [{ content: 7, status: "pending" }] }), [
      { code: "invalid_type", path: ["todos", 0, "content"] }
    ])
    assert.deepStrictEqual(violations(single, { todos: [{ content: "a" }] }), [
      { code: "missing_key", path: ["todos", 0, "status"] }
    ])
  })

  it("rejects excess keys in an item and at the top level, never strips them, in argument order", () => {
    assert.deepStrictEqual(violations(single, { todos: [{ content: "a", status: "pending", id: 1 }], merge: true }), [
      { code: "excess_property", path: ["todos", 0, "id"] },
      { code: "excess_property", path: ["merge"] }
    ])
    assert.deepStrictEqual(violations(single, { merge: true, todos: [{ id: 1, content: "a", status: "pending" }] }), [
      { code: "excess_property", path: ["merge"] },
      { code: "excess_property", path: ["todos", 0, "id"] }
    ])
  })

  it("reports several violations together, in one message", () => {
    const result = TodoValidation.validate(single, {
      todos: [
        { content: " ", status: "in_progress" },
        { content: "a", status: "in_progress" },
        { content: "A", status: "pending" }
      ]
    })
    assert.isTrue(Result.isFailure(result))
    if (Result.isFailure(result)) {
      const error = result.failure
      assert.deepStrictEqual(error.violations.map((v) => v.code), ["empty_content", "duplicate_content", "too_many_in_progress"])
      assert.include(error.message, "these 3 problems")
      assert.include(error.message, "todos[0].content")
      assert.include(error.message, "send the ENTIRE list again")
    }
  })

  // Inputs near the valid shape, so that both acceptances and every kind of rejection are generated.
  const Content = Schema.Union([Schema.String, Schema.Literals(["a", " a", "A ", "b", "fix  x", "Fix X", "", " "])])
  const NearItem = Schema.Struct({
    content: Content,
    status: Schema.Union([Todo.Status, Schema.String]),
    evidence: Schema.optionalKey(Schema.Union([Schema.String, Schema.Null, Schema.Literals(["ok", " ok ", " "])]))
  })
  const NearArgs = Schema.Struct({ todos: Schema.Array(NearItem).check(Schema.isMaxLength(6)) })
  const AnyArgs = Schema.Union([NearArgs, Schema.Json])

  it.prop("any input is either a canonical list or a coded error", { input: AnyArgs }, ({ input }) => {
    for (const policy of [single, parallel, { ...single, requireCompletedEvidence: true }]) {
      const result = TodoValidation.validate(policy, input)
      if (Result.isSuccess(result)) {
        // every accepted list satisfies the durable invariant, and re-validation is the identity
        assert.strictEqual(TodoEvents.writeInvariant.check({ todos: result.success }), undefined)
        assert.deepStrictEqual(Result.getOrThrow(TodoValidation.validate(policy, { todos: result.success })), result.success)
      } else {
        assert.instanceOf(result.failure, TodoValidationError)
        assert.isAbove(result.failure.violations.length, 0)
        for (const v of result.failure.violations) assert.isTrue(Schema.is(ViolationCode)(v.code))
      }
    }
  })

  describe("every problem in one reply (issue 11)", () => {
    it("reports shape and rule problems together, in argument order", () => {
      // an extra id key, status "done", two in_progress, "A" / "a " duplicates, blank content
      const result = TodoValidation.validate(single, {
        todos: fiveProblems
      })
      assert.isTrue(Result.isFailure(result))
      if (Result.isFailure(result)) {
        assert.deepStrictEqual(result.failure.violations.map((v) => [v.code, v.path]), [
          ["excess_property", ["todos", 0, "id"]],
          ["invalid_status", ["todos", 2, "status"]],
          ["duplicate_content", ["todos", 3, "content"]],
          ["empty_content", ["todos", 4, "content"]],
          ["too_many_in_progress", ["todos"]]
        ])
        assert.include(result.failure.message, "Fix these 5 problems")
      }
    })

    it("runs the rules over the fields that decoded, even in an item with a bad field", () => {
      assert.deepStrictEqual(
        violations(single, {
          todos: [{ content: "x", status: "in_progress" }, { content: " ", status: "in_progress", priority: 2 }, {
            content: 7,
            status: "in_progress"
          }]
        }),
        [
          { code: "empty_content", path: ["todos", 1, "content"] },
          { code: "excess_property", path: ["todos", 1, "priority"] },
          { code: "invalid_type", path: ["todos", 2, "content"] },
          { code: "too_many_in_progress", path: ["todos"] }
        ]
      )
    })

    it("says an unknown top-level key is not in the arguments, which hold only todos", () => {
      const result = TodoValidation.validate(single, { todos: [{ content: "x", status: "pending" }], priority: 1 })
      assert.isTrue(Result.isFailure(result))
      if (Result.isFailure(result)) {
        assert.deepStrictEqual(result.failure.violations[0].path, ["priority"])
        assert.include(result.failure.violations[0].message, "the arguments hold only todos")
        assert.notInclude(result.failure.message, "items hold only")
      }
    })

    it("names the items that are in_progress together, and what to do", () => {
      const result = TodoValidation.validate(single, {
        todos: [
          { content: "a", status: "pending" },
          { content: "b", status: "in_progress" },
          { content: "c", status: "completed" },
          { content: "d", status: "in_progress" }
        ]
      })
      assert.isTrue(Result.isFailure(result))
      if (Result.isFailure(result)) {
        const [v] = result.failure.violations
        assert.strictEqual(v.code, "too_many_in_progress")
        assert.include(v.message, "todos[1] and todos[3] are both in_progress")
        assert.include(v.message, "keep one in_progress and set the others to pending or completed")
      }
    })
  })

  describe("completion evidence", () => {
    const required = { ...single, requireCompletedEvidence: true }

    it("accepts evidence on completed items, trimmed; null means none", () => {
      const result = TodoValidation.validate(single, {
        todos: [
          { content: "Run the tests", status: "completed", evidence: " npm test: 120 passed " },
          { content: "Ship", status: "pending", evidence: null },
          { content: "Tag", status: "completed" }
        ]
      })
      assert.deepStrictEqual(Result.getOrThrow(result), [
        { content: "Run the tests", status: "completed", evidence: "npm test: 120 passed" },
        { content: "Ship", status: "pending" },
        { content: "Tag", status: "completed" }
      ])
    })

    it("rejects blank evidence, evidence on unfinished items, and (when required) completed items without it", () => {
      assert.deepStrictEqual(
        violations(required, {
          todos: [
            { content: "a", status: "completed", evidence: "  " },
            { content: "b", status: "in_progress", evidence: "started" },
            { content: "c", status: "completed" },
            { content: "d", status: "completed", evidence: null },
            { content: "e", status: "completed", evidence: "ok\u001b[2J" },
            { content: "f", status: "completed", evidence: 3 },
            { content: "g", status: "completed", evidence: "proof" }
          ]
        }),
        [
          { code: "empty_evidence", path: ["todos", 0, "evidence"] },
          { code: "evidence_not_completed", path: ["todos", 1, "evidence"] },
          { code: "missing_evidence", path: ["todos", 2, "evidence"] },
          { code: "missing_evidence", path: ["todos", 3, "evidence"] },
          { code: "control_character", path: ["todos", 4, "evidence"] },
          { code: "invalid_type", path: ["todos", 5, "evidence"] }
        ]
      )
      // invited, not required: a completed item without evidence is fine
      assert.isTrue(Result.isSuccess(TodoValidation.validate(single, { todos: [{ content: "c", status: "completed" }] })))
    })

    it("bounds evidence like content", () => {
      const small = { ...single, maxContentLength: 5 }
      assert.deepStrictEqual(violations(small, { todos: [{ content: "a", status: "completed", evidence: "123456" }] }), [
        { code: "evidence_too_long", path: ["todos", 0, "evidence"] }
      ])
    })
  })

  describe("huge inputs (issue 10, item 7)", () => {
    it("refuses arguments over the byte bound before reading them, whatever their size", () => {
      const result = TodoValidation.validate(single, { todos: [{ content: "x".repeat(1e7), status: "pending" }] })
      assert.isTrue(Result.isFailure(result))
      if (Result.isFailure(result)) {
        assert.deepStrictEqual(result.failure.violations.map((v) => v.code), ["arguments_too_large"])
        assert.isBelow(result.failure.message.length, 400)
      }
      const many = Array.from({ length: 200_000 }, () => ({ content: "a long enough step", status: "pending" }))
      assert.deepStrictEqual(violations(single, { todos: many }).map((v) => v.code), ["too_many_items", "arguments_too_large"])
    })

    it("never crashes on a huge content within a generous bound (no regex recursing per character)", () => {
      const generous = { ...single, maxItems: 2, maxContentLength: 20_000_000 }
      const huge = "x".repeat(10_000_000)
      assert.deepStrictEqual(Result.getOrThrow(TodoValidation.validate(generous, { todos: [{ content: huge, status: "pending" }] })), [
        { content: huge, status: "pending" }
      ])
      const spaced = "ab ".repeat(3_000_000) + "c"
      assert.isTrue(Result.isSuccess(TodoValidation.validate(generous, { todos: [{ content: spaced, status: "pending" }] })))
    })

    it("stops examining a content once it is over the bound", () => {
      const small = { ...single, maxContentLength: 10 }
      // over the bound: neither the control character nor the duplicate is looked for
      assert.deepStrictEqual(
        violations(small, {
          todos: [{ content: "x".repeat(11), status: "pending" }, { content: "x".repeat(11) + "\n", status: "pending" }]
        }),
        [{ code: "content_too_long", path: ["todos", 0, "content"] }, { code: "content_too_long", path: ["todos", 1, "content"] }]
      )
    })

    it("answers nested junk without overflowing the stack", () => {
      let deep: unknown = "x"
      for (let i = 0; i < 100_000; i++) deep = [deep]
      assert.deepStrictEqual(violations(single, { todos: [{ content: deep, status: "pending" }] }), [
        { code: "invalid_type", path: ["todos", 0, "content"] }
      ])
    })

    it("the largest valid call fits in the byte bound", () => {
      const policy = { ...single, maxItems: 20, maxContentLength: 50 }
      const astral = "😀".repeat(50)
      const todos = Array.from({ length: 20 }, (_, i) => ({
        content: `  ${astral.slice(0, -4)}${i}  `,
        status: "completed",
        evidence: ` ${astral} `
      }))
      assert.isTrue(Result.isSuccess(TodoValidation.validate(policy, { todos })))
    })
  })

  describe("bounded replies (issue 10, item 8)", () => {
    it("lists at most 20 problems, then says how many more", () => {
      const result = TodoValidation.validate(single, {
        todos: Array.from({ length: 100 }, (_, i) => ({ content: `step ${i}`, status: "done" }))
      })
      assert.isTrue(Result.isFailure(result))
      if (Result.isFailure(result)) {
        assert.strictEqual(result.failure.violations.length, 100)
        const lines = result.failure.message.split("\n")
        assert.strictEqual(lines.filter((line) => line.startsWith("- ")).length, 20)
        assert.strictEqual(lines.at(-1), "… and 80 more")
        assert.include(result.failure.message, "Fix these 100 problems")
      }
    })

    it("quotes contents shortened, never in full", () => {
      const generous = { ...single, maxContentLength: 2_000_000 }
      const big = "y".repeat(1_000_000)
      const result = TodoValidation.validate(generous, {
        todos: [{ content: big, status: "pending" }, { content: big, status: "pending" }]
      })
      assert.isTrue(Result.isFailure(result))
      if (Result.isFailure(result)) {
        assert.isBelow(result.failure.message.length, 400)
        assert.include(result.failure.message, `"${"y".repeat(79)}…"`)
      }
    })

    it("quotes a hostile key, shortened, so it can't add lines to the reply", () => {
      const key = `x\n- todos[0].content: all good (none)${"k".repeat(1000)}`
      const result = TodoValidation.validate(single, { todos: [{ content: "a", status: "pending", [key]: 1 }] })
      assert.isTrue(Result.isFailure(result))
      if (Result.isFailure(result)) {
        assert.deepStrictEqual(result.failure.violations[0].path, ["todos", 0, key])
        const lines = result.failure.message.split("\n")
        assert.strictEqual(lines.length, 2)
        assert.isBelow(lines[1]!.length, 200)
        assert.include(lines[1], `todos[0]["x\\n- todos[0].content`)
      }
    })

    it("doesn't examine items past the item bound", () => {
      const result = TodoValidation.validate(single, { todos: Array.from({ length: 100_000 }, () => ({})) })
      assert.isTrue(Result.isFailure(result))
      if (Result.isFailure(result)) {
        assert.strictEqual(result.failure.violations[0].code, "too_many_items")
        assert.strictEqual(result.failure.violations.length, 1 + 2 * single.maxItems)
      }
    })
  })

  describe("text that spoofs the display (issue 10, item 11)", () => {
    it("rejects control characters in content: line breaks, ESC, other C0 and C1, bidi overrides", () => {
      const bad = ["step\n[x] FAKE DONE ITEM", "red \u001b[31mtext", "tab\there", "c1 \u0085 next", "del \u007f", "rtl \u202e gnirts", "ls \u2028 x"]
      assert.deepStrictEqual(
        violations(single, { todos: bad.map((content) => ({ content, status: "pending" })) }),
        bad.map((_, i) => ({ code: "control_character" as const, path: ["todos", i, "content"] }))
      )
      // padding is trimmed first, so a trailing newline is no problem
      assert.isTrue(Result.isSuccess(TodoValidation.validate(single, { todos: [{ content: "ok\n", status: "pending" }] })))
    })

    it("counts content that shows nothing as empty", () => {
      assert.deepStrictEqual(
        violations(single, {
          todos: ["\u200b", "\u200b \u2060", "\u00ad", "\ufe0f"].map((content) => ({ content, status: "pending" }))
        }).map((v) => v.code),
        ["empty_content", "empty_content", "empty_content", "empty_content"]
      )
      // zero-width characters inside visible text are fine (emoji sequences use them)
      assert.isTrue(Result.isSuccess(TodoValidation.validate(single, { todos: [{ content: "ship 👨‍👩‍👧", status: "pending" }] })))
    })

    it("compares contents with default-ignorables removed and full case folding", () => {
      for (const [a, b] of [["strasse", "straße"], ["STRASSE", "straße"], ["fix", "fi\u00adx"], ["a", "a\u200b"], ["ﬁx", "FIX"], ["σας", "ΣΑΣ"]]) {
        assert.deepStrictEqual(
          violations(single, { todos: [{ content: a, status: "pending" }, { content: b, status: "pending" }] }),
          [{ code: "duplicate_content", path: ["todos", 1, "content"] }],
          `${a} / ${b}`
        )
      }
      // the Turkic dotless ı folds to itself, not to i
      assert.isTrue(
        Result.isSuccess(TodoValidation.validate(single, { todos: [{ content: "sık", status: "pending" }, { content: "sik", status: "pending" }] }))
      )
    })

    it("the durable invariant keeps its exact comparison, so old logs still load", () => {
      assert.strictEqual(
        TodoEvents.writeInvariant.check({
          todos: [{ content: "strasse", status: "pending" }, { content: "straße", status: "pending" }, { content: "a\u200b", status: "pending" }, { content: "a", status: "pending" }, { content: "line\nbreak", status: "pending" }]
        }),
        undefined
      )
    })
  })

  describe("the reported set equals the injected set", () => {
    const policy = { ...single, requireCompletedEvidence: true, maxItems: 12, maxContentLength: 40 }
    const faults = [
      "none",
      "completed",
      "excess_key",
      "bad_status",
      "missing_status",
      "content_type",
      "blank",
      "invisible",
      "control",
      "too_long",
      "duplicate",
      "in_progress",
      "evidence_on_pending",
      "empty_evidence",
      "missing_evidence",
      "not_object"
    ] as const
    type Fault = (typeof faults)[number]
    // the faults that leave an item's content clean, so a later item can duplicate it
    const cleanContent: ReadonlySet<Fault> = new Set([
      "none",
      "completed",
      "excess_key",
      "bad_status",
      "missing_status",
      "in_progress",
      "evidence_on_pending",
      "empty_evidence",
      "missing_evidence"
    ])
    const variants = [(s: string) => s.toUpperCase(), (s: string) => `${s[0]}\u00ad${s.slice(1)}`, (s: string) => `${s}\u200b`, (s: string) => ` ${s.replaceAll(" ", "  ")} `]
    const Injection = Schema.Struct({ fault: Schema.Literals(faults), pick: Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 99 })) })

    const build = (injections: ReadonlyArray<{ readonly fault: Fault; readonly pick: number }>, extraTop: boolean) => {
      const todos: Array<unknown> = []
      const expected: Array<string> = []
      const inProgress: Array<number> = []
      injections.forEach(({ fault, pick }, i) => {
        const content = `step ${i} strasse`
        const at = `todos.${i}`
        let item: Record<string, unknown> = { content, status: "pending" }
        switch (fault) {
          case "none":
            break
          case "completed":
            item = { content, status: "completed", evidence: `check ${i}` }
            break
          case "excess_key":
            item = { ...item, id: i }
            expected.push(`excess_property ${at}.id`)
            break
          case "bad_status":
            item = { content, status: "done" }
            expected.push(`invalid_status ${at}.status`)
            break
          case "missing_status":
            item = { content }
            expected.push(`missing_key ${at}.status`)
            break
          case "content_type":
            item = { content: i, status: "pending" }
            expected.push(`invalid_type ${at}.content`)
            break
          case "blank":
            item = { content: " \t ", status: "pending" }
            expected.push(`empty_content ${at}.content`)
            break
          case "invisible":
            item = { content: "\u200b\u2060", status: "pending" }
            expected.push(`empty_content ${at}.content`)
            break
          case "control":
            item = { content: `${content}\u001b[31m`, status: "pending" }
            expected.push(`control_character ${at}.content`)
            break
          case "too_long":
            item = { content: `${content} ${"z".repeat(40)}`, status: "pending" }
            expected.push(`content_too_long ${at}.content`)
            break
          case "duplicate": {
            const sources = injections.flatMap((inj, j) => j < i && cleanContent.has(inj.fault) ? [j] : [])
            if (sources.length === 0) break
            const source = `step ${sources[pick % sources.length]} strasse`
            item = { content: variants[pick % variants.length]!(source), status: "pending" }
            expected.push(`duplicate_content ${at}.content`)
            break
          }
          case "in_progress":
            item = { content, status: "in_progress" }
            inProgress.push(i)
            break
          case "evidence_on_pending":
            item = { content, status: "pending", evidence: "done already" }
            expected.push(`evidence_not_completed ${at}.evidence`)
            break
          case "empty_evidence":
            item = { content, status: "completed", evidence: "\u200b" }
            expected.push(`empty_evidence ${at}.evidence`)
            break
          case "missing_evidence":
            item = { content, status: "completed" }
            expected.push(`missing_evidence ${at}.evidence`)
            break
          case "not_object":
            todos.push(pick % 2 === 0 ? null : [content])
            expected.push(`invalid_type ${at}`)
            return
        }
        todos.push(item)
      })
      if (inProgress.length > 1) expected.push("too_many_in_progress todos")
      if (extraTop) expected.push("excess_property merge")
      return { input: extraTop ? { todos, merge: true } : { todos }, expected }
    }

    it.prop(
      "for random lists with injected faults",
      { injections: Schema.Array(Injection).check(Schema.isMaxLength(12)), extraTop: Schema.Boolean },
      ({ injections, extraTop }) => {
        const { input, expected } = build(injections, extraTop)
        const result = TodoValidation.validate(policy, input)
        if (expected.length === 0) {
          assert.isTrue(Result.isSuccess(result), JSON.stringify(input))
          return
        }
        assert.isTrue(Result.isFailure(result), JSON.stringify(input))
        if (Result.isFailure(result)) {
          const reported = result.failure.violations.map((v) => `${v.code} ${v.path.join(".")}`)
          assert.deepStrictEqual([...reported].sort(), [...expected].sort(), JSON.stringify(input))
          // and in argument order: items by index, the list-wide in_progress rule after them, `merge` last
          assert.deepStrictEqual(reported, expected)
        }
      },
      { arbitrary: { runs: 300 } }
    )
  })
})
