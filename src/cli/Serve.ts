/**
 * `todo-write serve`: `todo_write` as an MCP server over stdio, writing to one session.
 */
import { Console, Effect, Layer, Option } from "effect"
import { McpProtocol, McpServer } from "effect/ai"
import { Command, Flag } from "effect/cli"
import * as TodoListResource from "../mcp/TodoListResource.ts"
import * as TodoWriteMcp from "../mcp/TodoWriteMcp.ts"
import * as AgentSession from "../todo/AgentSession.ts"
import * as TodoPolicy from "../todo/TodoPolicy.ts"
import { inProgressChoices, policyOf } from "./Policy.ts"
import * as SessionArgument from "./SessionArgument.ts"
import * as Store from "./Store.ts"
import { version } from "./Version.ts"

export const command = Command.make("serve", {
  dir: Store.directory,
  store: Store.store,
  session: Flag.String("session").pipe(
    Flag.withDescription("The session to write to; restarting with the same id continues its log. Default: a new id"),
    Flag.optional
  ),
  inProgress: Flag.Literals("in-progress", inProgressChoices).pipe(
    Flag.withDescription(
      "REQUIRED. single: at most one todo in_progress; parallel: several when work truly runs in parallel"
    )
  )
}, ({ dir, store, session, inProgress }) =>
  Effect.gen(function*() {
    const id = yield* SessionArgument.decode(Option.getOrElse(session, () => crypto.randomUUID()))
    const where = store === "file" ? dir : "PostgreSQL ($DATABASE_URL)"
    yield* Console.error(`todo-write: serving todo_write over stdio; session ${id} in ${where} (in_progress: ${inProgress})`)
    const server = McpServer.layerStdio({
      name: "todo-write",
      version,
      protocols: [McpProtocol.v2025_11_25, McpProtocol.v2025_06_18, McpProtocol.v2025_03_26, McpProtocol.v2024_11_05],
      registrations: Layer.mergeAll(TodoWriteMcp.layer, TodoListResource.layer)
    }).pipe(
      Layer.provide(Layer.mergeAll(Store.log(store, dir), TodoPolicy.layer(policyOf(inProgress)), AgentSession.layer(id)))
    )
    return yield* Layer.launch(server)
  })).pipe(Command.withDescription("Run an MCP server over stdio that exposes todo_write, writing to a session log"))
