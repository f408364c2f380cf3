import { assert, describe, it } from "@effect/vitest"
import { Schema } from "effect"
import * as TodoText from "../../src/todo/TodoText.ts"

describe("TodoText", () => {
  it("finds the characters a todo may not hold", () => {
    assert.strictEqual(TodoText.unprintableCharacter("a\nb"), "U+000A")
    assert.strictEqual(TodoText.unprintableCharacter("x\u001b[2J"), "U+001B")
    assert.strictEqual(TodoText.unprintableCharacter("c1 \u009b"), "U+009B")
    assert.strictEqual(TodoText.unprintableCharacter("rtl \u2066"), "U+2066")
    assert.isUndefined(TodoText.unprintableCharacter("Fix the parser — all 3 cases, naïve ok 👨‍👩‍👧"))
  })

  it("counts characters, and stops counting just past a limit", () => {
    assert.strictEqual(TodoText.length("😀😀a"), 3)
    assert.strictEqual(TodoText.length("x".repeat(1000), 10), 11)
  })

  it("tells text that shows nothing", () => {
    for (const blank of ["", " ", "\u200b", "\u00ad\u2060", "\ufe0f \u200d"]) assert.isTrue(TodoText.isBlank(blank), JSON.stringify(blank))
    for (const shown of ["a", " a\u200b", "👍"]) assert.isFalse(TodoText.isBlank(shown), shown)
  })

  it("compares with default-ignorables removed, NFKC, full case folding and collapsed whitespace", () => {
    const same = (a: string, b: string) => assert.strictEqual(TodoText.comparisonKey(a), TodoText.comparisonKey(b), `${a} / ${b}`)
    same("strasse", "straße")
    same("STRASSE", "Straße")
    same("ẞ", "ss")
    same("fix", "fi\u00adx")
    same("a", "a\u200b")
    same("ﬁx", "FIX")
    same("Fix X", "fix  x")
    same("ｆｉｘ x", "fix\u00a0X")
    same("ὈΔΥΣΣΕΎΣ", "ὀδυσσεύς")
    assert.notStrictEqual(TodoText.comparisonKey("sık"), TodoText.comparisonKey("sik"))
    assert.notStrictEqual(TodoText.comparisonKey("résumé"), TodoText.comparisonKey("resume"))
  })

  it.prop(
    "the plain-ASCII fast path agrees with the general form, and a key is its own key",
    { s: Schema.Union([Schema.String, Schema.Literals(["Fix X", "fix  x", "A b", "ﬁ x", "Ǆ", "a  b", "Straße"])]) },
    ({ s }) => {
      const key = TodoText.comparisonKey(s)
      // a soft hyphen forces the general path; it is removed before anything else
      assert.strictEqual(TodoText.comparisonKey(`\u00ad${s}`), key)
      assert.strictEqual(TodoText.comparisonKey(key), key)
    }
  )

  it("quotes shortened, with control and invisible characters escaped", () => {
    assert.strictEqual(TodoText.quote("plain"), `"plain"`)
    assert.strictEqual(TodoText.quote("x".repeat(200)), `"${"x".repeat(79)}…"`)
    assert.strictEqual(TodoText.quote("😀".repeat(100), 3), `"😀😀…"`)
    assert.strictEqual(TodoText.quote("a\nb\u001b\u0085\u200b\u202e"), `"a\\nb\\u001b\\u0085\\u200b\\u202e"`)
    assert.strictEqual(JSON.parse(TodoText.quote("a\u2028\u200bz")), "a\u2028\u200bz")
  })

  it("prints text on one line, control characters escaped, invisible-only text made visible", () => {
    assert.strictEqual(TodoText.printable("step\n[x] FAKE DONE ITEM"), "step\\u000a[x] FAKE DONE ITEM")
    assert.strictEqual(TodoText.printable("\u001b[31mred"), "\\u001b[31mred")
    assert.strictEqual(TodoText.printable("\u200b"), "\\u200b")
    assert.strictEqual(TodoText.printable("family 👨‍👩‍👧"), "family 👨‍👩‍👧")
    assert.notInclude(TodoText.printable("a\u2028b\u202ec"), "\u2028")
  })
})
