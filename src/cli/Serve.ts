/**
 * `todo-write serve`: `todo_write` as an MCP server over stdio, writing to one session.
 *
 * It starts only once its session log is ready: the directory created or checked and the session's
 * lock taken (file store), or the database reached (PostgreSQL). Anything that fails before is one
 * line on stderr and a non-zero exit; stdout carries nothing but JSON-RPC. When stdin closes, the
 * answers still due are written and it exits 0.
 */
import { Cause, Console, Effect, Fiber, Layer, Option } from "effect"
import { McpProtocol, McpServer } from "effect/ai"
import { Command, Flag } from "effect/cli"
import * as McpStdio from "../mcp/McpStdio.ts"
import * as TodoListResource from "../mcp/TodoListResource.ts"
import * as TodoWriteMcp from "../mcp/TodoWriteMcp.ts"
import * as AgentSession from "../todo/AgentSession.ts"
import * as TodoPolicy from "../todo/TodoPolicy.ts"
import { evidenceFlag, inProgressChoices, policyOf } from "./Policy.ts"
import * as ServeHttp from "./ServeHttp.ts"
import * as SessionArgument from "./SessionArgument.ts"
import * as Store from "./Store.ts"
import { version } from "./Version.ts"

export const command = Command.make("serve", {
  dir: Store.directory,
  store: Store.store,
  session: Flag.String("session").pipe(
    Flag.withDescription("The session to write to; restarting with the same id continues its log (default: a new id)"),
    Flag.optional
  ),
  inProgress: Flag.Literals("in-progress", inProgressChoices).pipe(
    Flag.withDescription(
      "REQUIRED. single: at most one todo in_progress; parallel: several when work truly runs in parallel"
    )
  ),
  evidence: evidenceFlag,
  ...ServeHttp.flags
}, ({ dir, store, session, inProgress, evidence, http, host, port, tokenFile }) =>
  Effect.gen(function*() {
    if (http) {
      if (Option.isSome(session)) return yield* Store.userError("--session is for stdio; over --http the URL names it")
      return yield* ServeHttp.serve({ host, port, tokenFile, store, dir, inProgress, evidence })
    }
    const id = yield* SessionArgument.decode(Option.getOrElse(session, () => crypto.randomUUID()))
    const where = yield* Store.describe(store, dir)
    const log = yield* Store.reported(
      Layer.build(Store.serving(store, dir, id)),
      `can't serve session ${id} in ${where}`
    )
    yield* Console.error(`todo-write: serving todo_write over stdio; session ${id} in ${where} (in_progress: ${inProgress})`)
    const server = McpServer.layerStdio({
      name: "todo-write",
      version,
      protocols: [McpProtocol.v2025_11_25, McpProtocol.v2025_06_18, McpProtocol.v2025_03_26, McpProtocol.v2024_11_05],
      registrations: Layer.mergeAll(TodoWriteMcp.layer, TodoListResource.layer)
    }).pipe(
      Layer.provide(
        Layer.mergeAll(Layer.succeedContext(log), TodoPolicy.layer(policyOf(inProgress, evidence)), AgentSession.layer(id))
      ),
      Layer.provide(McpStdio.layer())
    )
    // Once stdin has ended and every answer is written, the stdio transport interrupts the fiber that
    // started it: that is how the server stops, so it runs in a fiber of its own and its interruption
    // is a clean end.
    const fiber = yield* Effect.forkChild(Layer.launch(server))
    yield* Fiber.join(fiber).pipe(
      Effect.catchCause((cause) => Cause.hasInterruptsOnly(cause) ? Effect.void : Effect.failCause(cause))
    )
  }).pipe(Effect.scoped)).pipe(
    Command.withDescription("Run an MCP server over stdio that exposes todo_write, writing to a session log")
  )
