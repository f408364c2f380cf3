/**
 * `effect-todo-write/mcp`: `todo_write` on Effect's MCP server, and its definition as MCP, OpenAI and
 * Anthropic tool objects.
 *
 * @since 0.2.0
 */

/** @since 0.2.0 */
export * as TodoListResource from "./TodoListResource.ts"
/** @since 0.2.0 */
export * as TodoWriteMcp from "./TodoWriteMcp.ts"
/** @since 0.2.0 */
export * as ToolDefinition from "./ToolDefinition.ts"
