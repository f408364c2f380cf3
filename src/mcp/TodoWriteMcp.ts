/**
 * `todo_write` as an MCP tool, registered on Effect's `McpServer`. It advertises the closed input
 * schema, and answers every rejection, schema violations included, as a tool result with
 * `isError: true` carrying the same coded message as the library's validation (MCP 2025-11-25,
 * SEP-1303: input validation errors are tool execution errors, so the model sees them and can
 * correct itself; a JSON-RPC -32602, which `McpServer.toolkit` would send, most clients never show).
 *
 * @since 0.2.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as McpSchema from "effect/ai/McpSchema"
import * as McpServer from "effect/ai/McpServer"
import * as Tool from "effect/ai/Tool"
import { CheckedSessionLog } from "../log/CheckedSessionLog.ts"
import { AgentSession } from "../todo/AgentSession.ts"
import * as Todo from "../todo/Todo.ts"
import { TodoPolicy } from "../todo/TodoPolicy.ts"
import * as TodoWrite from "../todo/TodoWrite.ts"
import * as ToolDefinition from "./ToolDefinition.ts"
import * as TodoWriteError from "../todo/TodoWriteError.ts"

const decodeToolJson = Schema.decodeUnknownEffect(McpSchema.ToolJson)

/**
 * The MCP tool definition for a policy.
 *
 * @since 0.2.0
 * @category definitions
 */
export const definition = Effect.fnUntraced(function*(policy: TodoWrite.DescriptionPolicy) {
  const plain = ToolDefinition.mcp(policy)
  return new McpSchema.Tool({
    ...plain,
    inputSchema: yield* Effect.orDie(decodeToolJson(plain.inputSchema)),
    outputSchema: Schema.toJsonSchemaDocument(TodoWrite.Success, { onExcessProperty: "error" }).schema
  })
})

const text = (value: string) => ({ type: "text", text: value }) as const

/**
 * Registers `todo_write` on the `McpServer`. Every call is written, through the `CheckedSessionLog`
 * provided, to the session of the `AgentSession` in context when the layer is built (stdio: one
 * server, one session) or, without one, to the `AgentSession` each call's request carries (HTTP:
 * `TodoWriteMcpHttp` provides it per request); a call with neither is an `isError` result.
 *
 * @since 0.2.0
 * @category layers
 */
export const layer: Layer.Layer<never, never, McpServer.McpServer | TodoPolicy | CheckedSessionLog> = Layer
  .effectDiscard(Effect.gen(function*() {
    const server = yield* McpServer.McpServer
    const policy = yield* TodoPolicy
    const session = yield* Effect.serviceOption(AgentSession)
    const run = TodoWrite.executeWith(policy, yield* CheckedSessionLog)
    yield* server.addTool({
      tool: yield* definition(policy),
      annotations: Context.make(Tool.Title, TodoWrite.title),
      handle: (payload: unknown) =>
        run(payload).pipe(
          (call) => Option.isSome(session) ? Effect.provideService(call, AgentSession, session.value) : call,
          Effect.match({
            onSuccess: (result) =>
              new McpSchema.CallToolResult({
                content: [text(Todo.summary(result.counts))],
                structuredContent: result
              }),
            onFailure: (error) =>
              new McpSchema.CallToolResult({ isError: true, content: [text(TodoWriteError.modelText(error))] })
          })
        )
    })
  }))
