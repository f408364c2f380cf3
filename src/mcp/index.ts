/**
 * `effect-todo-write/mcp`: `todo_write` on Effect's MCP server (stdio through a checked transport, or
 * Streamable HTTP with a session per client behind `HttpAccess`), and its definition as MCP, OpenAI and
 * Anthropic tool objects.
 *
 * @since 0.2.0
 */

/** @since 0.2.0 */
export * as McpStdio from "./McpStdio.ts"
/** @since 0.2.0 */
export * as HttpAccess from "./HttpAccess.ts"
/** @since 0.2.0 */
export * as TodoListResource from "./TodoListResource.ts"
/** @since 0.2.0 */
export * as TodoWriteMcp from "./TodoWriteMcp.ts"
/** @since 0.2.0 */
export * as TodoWriteMcpHttp from "./TodoWriteMcpHttp.ts"
/** @since 0.2.0 */
export * as ToolDefinition from "./ToolDefinition.ts"
