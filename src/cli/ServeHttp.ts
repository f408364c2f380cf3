/**
 * `todo-write serve --http`: `todo_write` over MCP Streamable HTTP, one session per client (from the
 * URL, or a new one per MCP session), on loopback unless a bearer token is given.
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServer from "effect/http/HttpServer"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { createServer } from "node:http"
import * as HttpAccess from "../mcp/HttpAccess.ts"
import * as TodoWriteMcpHttp from "../mcp/TodoWriteMcpHttp.ts"
import * as ProjectionStore from "../projection/ProjectionStore.ts"
import * as TodoPolicy from "../todo/TodoPolicy.ts"
import * as Flags from "./Flags.ts"
import * as Store from "./Store.ts"
import { version } from "./Version.ts"

export interface Options {
  readonly host: string
  readonly port: number
  readonly tokenFile: Option.Option<string>
  readonly store: Flags.Store
  readonly dir: string
  readonly inProgress: Flags.InProgress
  readonly evidence: Flags.Evidence
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
      Layer.provide(TodoPolicy.layer(Flags.policyOf(options.inProgress, options.evidence)))
    )
    return yield* Layer.launch(server).pipe(
      Effect.catchTag("Unprotected", (error) => Store.userError(`${error.message}: pass --token-file`))
    )
  })
