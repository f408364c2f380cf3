/**
 * `todo-write serve`: `todo_write` as an MCP server over stdio, writing to one session.
 *
 * It starts only once its session log is ready: the directory created or checked and the session's
 * lock taken (file store), or the database reached (PostgreSQL). Anything that fails before is one
 * line on stderr and a non-zero exit; stdout carries nothing but JSON-RPC. When stdin closes, the
 * answers still due are written and it exits 0.
 */
import * as McpProtocol from "effect/ai/McpProtocol"
import * as McpServer from "effect/ai/McpServer"
import * as Cause from "effect/Cause"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as McpStdio from "../mcp/McpStdio.ts"
import * as TodoListResource from "../mcp/TodoListResource.ts"
import * as TodoWriteMcp from "../mcp/TodoWriteMcp.ts"
import * as AgentSession from "../todo/AgentSession.ts"
import * as TodoPolicy from "../todo/TodoPolicy.ts"
import * as Flags from "./Flags.ts"
import * as SessionArgument from "./SessionArgument.ts"
import * as Store from "./Store.ts"
import { version } from "./Version.ts"

/** The command's input, as `Cli.ts` parses it. */
export interface Input {
  readonly dir: string
  readonly store: Flags.Store
  readonly session: Option.Option<string>
  readonly inProgress: Flags.InProgress
  readonly evidence: Flags.Evidence
  readonly http: boolean
  readonly host: string
  readonly port: number
  readonly tokenFile: Option.Option<string>
}

/** Serves over stdio until stdin ends, or over HTTP (`ServeHttp.ts`, imported only then) until interrupted. */
export const run = ({ dir, store, session, inProgress, evidence, http, host, port, tokenFile }: Input) =>
  Effect.gen(function*() {
    if (http) {
      if (Option.isSome(session)) return yield* Store.userError("--session is for stdio; over --http the URL names it")
      const ServeHttp = yield* Effect.promise(() => import("./ServeHttp.ts"))
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
        Layer.mergeAll(Layer.succeedContext(log), TodoPolicy.layer(Flags.policyOf(inProgress, evidence)), AgentSession.layer(id))
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
  }).pipe(Effect.scoped)
