import { assert, describe, it } from "@effect/vitest"
import { Tool } from "effect/ai"
import { encode } from "gpt-tokenizer/encoding/o200k_base"
import * as ToolDefinition from "../../src/mcp/ToolDefinition.ts"
import * as TodoWrite from "../../src/todo/TodoWrite.ts"

const policies = [false, true].flatMap((allowParallelInProgress) =>
  [false, true].map((requireCompletedEvidence) => ({ allowParallelInProgress, requireCompletedEvidence }))
)

/** Every object schema in `schema`, with its path. */
const objects = (schema: any, path = "$"): Array<[string, any]> => {
  const found: Array<[string, any]> = schema.type === "object" ? [[path, schema]] : []
  for (const [key, value] of Object.entries(schema.properties ?? {})) found.push(...objects(value, `${path}.${key}`))
  if (schema.items !== undefined) found.push(...objects(schema.items, `${path}[]`))
  return found
}

describe("ToolDefinition", () => {
  it("the strict form (OpenAI, Anthropic, the effect/ai tool) lists every key as required, closes every object and makes optional ones nullable", () => {
    for (const policy of policies) {
      const strict = [
        ToolDefinition.openAi(policy).function,
        ToolDefinition.openAiResponses(policy),
        { strict: true, parameters: ToolDefinition.anthropic(policy).input_schema },
        { strict: true, parameters: Tool.getJsonSchema(TodoWrite.tool(policy)) }
      ]
      for (const tool of strict) {
        assert.isTrue(tool.strict)
        for (const [path, object] of objects(tool.parameters)) {
          assert.strictEqual(object.additionalProperties, false, path)
          assert.deepStrictEqual([...object.required].sort(), Object.keys(object.properties).sort(), path)
          assert.notProperty(object, "anyOf", path)
        }
        const evidence = (tool.parameters as any).properties.todos.items.properties.evidence
        assert.deepStrictEqual(evidence.type, ["string", "null"])
        assert.isString(evidence.description)
      }
    }
  })

  it("every format advertises evidence from the one item schema", () => {
    const all = ToolDefinition.all({ allowParallelInProgress: false, requireCompletedEvidence: true })
    for (const schema of [all.mcp.inputSchema, TodoWrite.parametersJsonSchema]) {
      const items = (schema as any).properties.todos.items
      assert.strictEqual(items.properties.evidence.type, "string")
      assert.deepStrictEqual(items.required, ["content", "status"])
    }
    for (const tool of [all.mcp, all.anthropic, all["openai-responses"], all.openai.function]) {
      assert.include(tool.description, "must cite evidence")
    }
  })

  it("stays within 250 o200k tokens for every policy, in both forms", () => {
    for (const policy of policies) {
      const description = TodoWrite.description(policy)
      for (const parameters of [TodoWrite.parametersJsonSchema, ToolDefinition.openAiParameters]) {
        const tokens = encode(JSON.stringify({ name: TodoWrite.name, description, parameters })).length
        assert.isAtMost(tokens, 250, JSON.stringify(policy))
      }
    }
  })
})
