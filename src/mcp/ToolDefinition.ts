/**
 * The `todo_write` definition as other agent stacks declare tools, for wiring it into an agent that
 * isn't built on Effect: the same name, description and closed JSON Schema everywhere, all read from
 * `TodoWrite`'s one source of metadata.
 *
 * @since 0.2.0
 */
import * as TodoWrite from "../todo/TodoWrite.ts"

type Policy = { readonly allowParallelInProgress: boolean }

/**
 * An MCP `Tool`, as in `tools/list`.
 *
 * @since 0.2.0
 * @category definitions
 */
export const mcp = (policy: Policy) => ({
  name: TodoWrite.name,
  title: TodoWrite.title,
  description: TodoWrite.description(policy),
  inputSchema: TodoWrite.parametersJsonSchema,
  annotations: {
    title: TodoWrite.title,
    readOnlyHint: TodoWrite.hints.readOnly,
    destructiveHint: TodoWrite.hints.destructive,
    idempotentHint: TodoWrite.hints.idempotent,
    openWorldHint: TodoWrite.hints.openWorld
  }
})

/**
 * An OpenAI Chat Completions function tool (`tools[]` of `/v1/chat/completions`), strict: the
 * schema is closed and every key required.
 *
 * @since 0.2.0
 * @category definitions
 */
export const openAi = (policy: Policy) => ({
  type: "function",
  function: {
    name: TodoWrite.name,
    description: TodoWrite.description(policy),
    parameters: TodoWrite.parametersJsonSchema,
    strict: true
  }
})

/**
 * An OpenAI Responses API function tool (`tools[]` of `/v1/responses`): the same, flat.
 *
 * @since 0.2.0
 * @category definitions
 */
export const openAiResponses = (policy: Policy) => ({
  type: "function",
  name: TodoWrite.name,
  description: TodoWrite.description(policy),
  parameters: TodoWrite.parametersJsonSchema,
  strict: true
})

/**
 * An Anthropic Messages API tool.
 *
 * @since 0.2.0
 * @category definitions
 */
export const anthropic = (policy: Policy) => ({
  name: TodoWrite.name,
  description: TodoWrite.description(policy),
  input_schema: TodoWrite.parametersJsonSchema
})

/**
 * Every format at once, keyed as `todo-write schema --format` names them.
 *
 * @since 0.2.0
 * @category definitions
 */
export const all = (policy: Policy) => ({
  mcp: mcp(policy),
  openai: openAi(policy),
  "openai-responses": openAiResponses(policy),
  anthropic: anthropic(policy)
})
