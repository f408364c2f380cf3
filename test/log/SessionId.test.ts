import { assert, describe, it } from "@effect/vitest"
import { Schema } from "effect"
import * as SessionId from "../../src/log/SessionId.ts"

describe("SessionId", () => {
  it("accepts plain ids", () => {
    for (const id of ["a", "session-1", "A_b-C", "x".repeat(SessionId.maxLength), "01JABCDEF"]) {
      assert.isTrue(SessionId.is(id), id)
    }
  })

  it("rejects ids that could escape a directory or break a file name", () => {
    for (
      const id of [
        "",
        "../x",
        "..",
        ".",
        "a/b",
        "a\\b",
        "/etc/passwd",
        "C:",
        "a\u0000b",
        "x".repeat(SessionId.maxLength + 1),
        "-leading-dash",
        "_leading",
        "has space",
        "dot.ted",
        "CON",
        "nul",
        "com1",
        "é"
      ]
    ) {
      assert.isFalse(SessionId.is(id), JSON.stringify(id))
    }
  })

  it.prop("every accepted id is a safe file name", [Schema.String], ([s]) => {
    if (!SessionId.is(s)) return true
    return /^[A-Za-z0-9][A-Za-z0-9_-]*$/.test(s) && s.length <= SessionId.maxLength
  })
})
