/**
 * The `todo_write` definition as other agent stacks declare tools, for wiring it into an agent that
 * isn't built on Effect: the same name, description and closed JSON Schema everywhere, all read from
 * `TodoWrite`'s one source of metadata.
 *
 * @since 0.2.0
 */
import type * as JsonSchema from "effect/JsonSchema"
import * as TodoWrite from "../todo/TodoWrite.ts"

type Policy = TodoWrite.DescriptionPolicy

/**
 * The parameters in the form OpenAI's strict mode demands: every key listed in `required`, an
 * optional one nullable (`evidence: null` means none, which validation accepts). Derived from the
 * one item schema by `OpenAiStructuredOutput`, its nullable unions written compactly.
 *
 * @since 0.2.0
 * @category definitions
 */
export const openAiParameters: JsonSchema.JsonSchema = TodoWrite.strictParametersJsonSchema

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
 * schema is closed, every key required, the optional `evidence` nullable.
 *
 * @since 0.2.0
 * @category definitions
 */
export const openAi = (policy: Policy) => ({
  type: "function",
  function: {
    name: TodoWrite.name,
    description: TodoWrite.description(policy),
    parameters: openAiParameters,
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
  parameters: openAiParameters,
  strict: true
})

/**
 * An Anthropic Messages API tool, with the same strict schema (valid under Anthropic's strict tool
 * use too): the definition the `effect/ai` tool sends through `@effect/ai-anthropic`.
 *
 * @since 0.2.0
 * @category definitions
 */
export const anthropic = (policy: Policy) => ({
  name: TodoWrite.name,
  description: TodoWrite.description(policy),
  input_schema: TodoWrite.strictParametersJsonSchema
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
