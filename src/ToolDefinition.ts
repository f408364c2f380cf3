/**
 * The `todo_write` definition as other agent stacks declare tools, for wiring it into an agent that
 * isn't built on Effect: the same name, description and closed JSON Schema everywhere.
 */
import * as TodoWrite from "./TodoWrite.ts"

type Policy = { readonly allowParallelInProgress: boolean }

/** An MCP `Tool` (as in `tools/list`). */
export const mcp = (policy: Policy) => ({
  name: TodoWrite.name,
  description: TodoWrite.description(policy),
  inputSchema: TodoWrite.parametersJsonSchema
})

/** An OpenAI function tool (Chat Completions `tools[]`), strict: the schema is closed and every key required. */
export const openAi = (policy: Policy) => ({
  type: "function",
  function: {
    name: TodoWrite.name,
    description: TodoWrite.description(policy),
    parameters: TodoWrite.parametersJsonSchema,
    strict: true
  }
})

/** An Anthropic Messages API tool. */
export const anthropic = (policy: Policy) => ({
  name: TodoWrite.name,
  description: TodoWrite.description(policy),
  input_schema: TodoWrite.parametersJsonSchema
})

export const all = (policy: Policy) => ({ mcp: mcp(policy), openai: openAi(policy), anthropic: anthropic(policy) })
