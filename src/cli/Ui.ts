/**
 * `todo-write ui`: the live web view of a store's sessions (`WebView`), served on Node's HTTP server,
 * on the loopback address unless `--host` says otherwise. Prints its URL, then serves until
 * interrupted.
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Console, Effect, Layer } from "effect"
import { Command, Flag } from "effect/cli"
import { HttpServer } from "effect/http"
import { createServer } from "node:http"
import * as WebView from "../web/WebView.ts"
import * as LiveStore from "./LiveStore.ts"
import * as Store from "./Store.ts"

/** Prints where the view is, once the server listens. */
const announce = (store: Store.Store, dir: string) =>
  Layer.effectDiscard(Effect.gen(function*() {
    const server = yield* HttpServer.HttpServer
    const where = yield* Store.describe(store, dir)
    yield* Console.log(`todo-write ui: ${HttpServer.formatAddress(server.address)}/ (sessions in ${where}); Ctrl-C stops it`)
  }))

export const command = Command.make("ui", {
  dir: Store.directory,
  store: Store.store,
  host: Flag.String("host").pipe(
    Flag.withDescription("The address to listen on; anything but loopback exposes the sessions to the network"),
    Flag.withDefault("127.0.0.1")
  ),
  port: Flag.Int("port").pipe(Flag.withDescription("The port to listen on (0: any free port)"), Flag.withDefault(7357))
}, ({ dir, store, host, port }) =>
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
).pipe(Command.withDescription("Serve a live web page of the sessions and their todo lists (read-only)"))
