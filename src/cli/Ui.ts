/**
 * `todo-write ui`: the live web view of a store's sessions (`WebView`), served on Node's HTTP server,
 * on the loopback address unless `--host` says otherwise. Prints its URL, then serves until
 * interrupted.
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as HttpServer from "effect/http/HttpServer"
import * as Layer from "effect/Layer"
import { createServer } from "node:http"
import * as WebView from "../web/WebView.ts"
import type * as Flags from "./Flags.ts"
import * as LiveStore from "./LiveStore.ts"
import * as Store from "./Store.ts"

/** Prints where the view is, once the server listens. */
const announce = (store: Flags.Store, dir: string) =>
  Layer.effectDiscard(Effect.gen(function*() {
    const server = yield* HttpServer.HttpServer
    const where = yield* Store.describe(store, dir)
    yield* Console.log(`todo-write ui: ${HttpServer.formatAddress(server.address)}/ (sessions in ${where}); Ctrl-C stops it`)
  }))

/** The command's input, as `Cli.ts` parses it. */
export interface Input {
  readonly dir: string
  readonly store: Flags.Store
  readonly host: string
  readonly port: number
}

/** Serves the view until interrupted; a wildcard `--host` is refused. */
export const run = ({ dir, store, host, port }: Input) =>
  // A wildcard address also answers on loopback, where a Host check can't tell a rebinding page from
  // the user's own: name the interface to expose instead.
  ["0.0.0.0", "::", "[::]"].includes(host)
    ? Effect.fail(Store.userError(`--host ${host} listens everywhere, loopback included: name one address instead`))
    : Layer.launch(
    Layer.mergeAll(
      WebView.layer,
      announce(store, dir)
    ).pipe(
      Layer.provide(NodeHttpServer.layer(createServer, { host, port, gracefulShutdownTimeout: "1 second" })),
      Layer.provide(LiveStore.layer(store, dir))
    )
  )
