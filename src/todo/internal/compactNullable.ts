/**
 * JSON Schema nullable unions in fewer tokens, for the strict definition every model reads.
 */
import type * as JsonSchema from "effect/JsonSchema"

const isSchema = (u: unknown): u is JsonSchema.JsonSchema => typeof u === "object" && u !== null && !Array.isArray(u)

/** `anyOf: [{ type: T, … }, { type: "null" }]` as `{ type: [T, "null"], … }`: the same, in fewer tokens. */
export const compactNullable = (schema: JsonSchema.JsonSchema): JsonSchema.JsonSchema => {
  const out: JsonSchema.JsonSchema = {}
  for (const [key, value] of Object.entries(schema)) {
    out[key] = Array.isArray(value)
      ? value.map((v) => isSchema(v) ? compactNullable(v) : v)
      : isSchema(value)
      ? compactNullable(value)
      : value
  }
  const anyOf = out.anyOf
  if (Array.isArray(anyOf) && anyOf.length === 2 && isSchema(anyOf[0]) && isSchema(anyOf[1])) {
    const [some, none] = anyOf
    if (typeof some.type === "string" && none.type === "null" && Object.keys(none).length === 1) {
      const { anyOf: _, ...rest } = out
      return { ...rest, ...some, type: [some.type, "null"] }
    }
  }
  return out
}

