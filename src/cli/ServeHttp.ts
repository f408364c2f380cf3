/**
 * `todo-write serve --http`: `todo_write` over MCP Streamable HTTP, one session per client (from the
 * URL, or a new one per MCP session), on loopback unless a bearer token is given.
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Console, Effect, Layer, Option, Redacted } from "effect"
import { Flag } from "effect/cli"
import { HttpRouter, HttpServer } from "effect/http"
import { createServer } from "node:http"
import * as HttpAccess from "../mcp/HttpAccess.ts"
import * as TodoWriteMcpHttp from "../mcp/TodoWriteMcpHttp.ts"
import * as ProjectionStore from "../projection/ProjectionStore.ts"
import * as TodoPolicy from "../todo/TodoPolicy.ts"
import { type Evidence, type InProgress, policyOf } from "./Policy.ts"
import * as Store from "./Store.ts"
import { version } from "./Version.ts"

export const flags = {
  http: Flag.Boolean("http").pipe(
    Flag.withDescription("Serve MCP Streamable HTTP at /mcp/<session-id> instead of stdio"),
    Flag.withDefault(false)
  ),
  host: Flag.String("host").pipe(
    Flag.withDescription("With --http: the address to listen on. Anything but loopback needs --token-file"),
    Flag.withDefault("127.0.0.1")
  ),
  port: Flag.Int("port").pipe(
    Flag.withDescription("With --http: the port to listen on (0: any free port, printed on stderr)"),
    Flag.withDefault(8080)
  ),
  tokenFile: Flag.FileText("token-file").pipe(
    Flag.withDescription("With --http: a file holding the bearer token every request must carry"),
    Flag.optional
  )
}

export interface Options {
  readonly host: string
  readonly port: number
  readonly tokenFile: Option.Option<string>
  readonly store: Store.Store
  readonly dir: string
  readonly inProgress: InProgress
  readonly evidence: Evidence
}

/** Runs the HTTP server until interrupted. */
export const serve = (options: Options) =>
  Effect.gen(function*() {
    const token = Option.map(options.tokenFile, (text) => text.trim())
    if (Option.isSome(token) && token.value.length < 16) {
      return yield* Store.userError("--token-file must hold a token of at least 16 characters")
    }
    const where = yield* Store.describe(options.store, options.dir)
    const announce = Layer.effectDiscard(HttpServer.addressFormattedWith((url) =>
      Console.error(
        `todo-write: serving todo_write over MCP Streamable HTTP at ${url}/mcp/<session-id> (or ${url}/mcp for a new ` +
          `session); sessions in ${where} (in_progress: ${options.inProgress})`
      )
    ))
    const app = Layer.mergeAll(
      TodoWriteMcpHttp.layer({ name: "todo-write", version }),
      HttpAccess.layer({ token: Option.getOrUndefined(Option.map(token, Redacted.make)) })
    )
    const routes = HttpRouter.serve(app, { disableLogger: true, disableListenLog: true, routerConfig: TodoWriteMcpHttp.routerConfig })
    // Announced once the routes are up (and the access rules accepted the address).
    const server = announce.pipe(
      Layer.provide(routes),
      Layer.provideMerge(NodeHttpServer.layer(createServer, { port: options.port, host: options.host })),
      Layer.provide(ProjectionStore.layer.pipe(Layer.provideMerge(Store.log(options.store, options.dir)))),
      Layer.provide(TodoPolicy.layer(policyOf(options.inProgress, options.evidence)))
    )
    return yield* Layer.launch(server).pipe(
      Effect.catchTag("Unprotected", (error) => Store.userError(`${error.message}: pass --token-file`))
    )
  })
