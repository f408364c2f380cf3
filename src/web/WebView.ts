/**
 * A small live web view of the sessions in a store, on Effect's HTTP router: a page listing every
 * session with its current list, most recently active first, a page per session with its history,
 * and the Server-Sent Events feeds (`Feed`) that keep both up to date without reloading.
 *
 * Safe by default:
 * - read-only: only `GET` is answered (anything else is a 405), and nothing writes;
 * - content is text, never HTML: the page carries no data, its script writes what the feeds send
 *   with `textContent`; a strict Content-Security-Policy allows only the page's own script and style
 *   sheet, no inline code, and Trusted Types, so even a mistaken `innerHTML` would be refused;
 * - session ids in URLs are validated as everywhere else (a 400 otherwise, before any read);
 * - on a loopback address, a request must name that address in its `Host` header, so a page of
 *   another site can't reach the view through DNS rebinding.
 *
 * @since 0.2.0
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServer from "effect/http/HttpServer"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as NetAddress from "effect/net/NetAddress"
import type { CheckedSessionLog } from "../log/CheckedSessionLog.ts"
import * as SessionId from "../log/SessionId.ts"
import type { ProjectionStore } from "../projection/ProjectionStore.ts"
import * as Client from "./Client.ts"
import * as Feed from "./Feed.ts"
import * as Page from "./Page.ts"

/**
 * The policy every response carries: nothing but the view's own script, style sheet and feeds.
 *
 * @since 0.2.0
 * @category security
 */
export const contentSecurityPolicy = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
  "require-trusted-types-for 'script'",
  "trusted-types 'none'"
].join("; ")

const securityHeaders = {
  "content-security-policy": contentSecurityPolicy,
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-resource-policy": "same-origin",
  "cache-control": "no-store"
}

const loopbackNames = ["127.0.0.1", "localhost", "[::1]"]

/**
 * The `Host` headers accepted by a server bound to `hostname:port`: on a loopback address, only
 * the loopback names with that port; elsewhere any (whoever binds a public address means it).
 *
 * @since 0.2.0
 * @category security
 */
export const allowedHosts = (hostname: string, port: number): ReadonlySet<string> | undefined =>
  loopbackNames.includes(hostname) || hostname === "::1" || /^127\./.test(hostname)
    ? new Set([...loopbackNames, hostname].map((name) => `${name}:${port}`))
    : undefined

const text = (status: number, body: string) => HttpServerResponse.text(body, { status })

const encoder = new TextEncoder()
/** Reconnect after a second; a comment every 15 s keeps the connection from looking idle. */
const retry = encoder.encode("retry: 1000\n\n")
const keepalive = Stream.tick("15 seconds").pipe(Stream.drop(1), Stream.map(() => encoder.encode(": keepalive\n\n")))

const sse = (events: Stream.Stream<Feed.Event>) =>
  HttpServerResponse.stream(
    Stream.concat(Stream.make(retry), Stream.merge(Stream.map(events, Feed.encode), keepalive)),
    { contentType: "text/event-stream", headers: { "x-accel-buffering": "no" } }
  )

/** The route's `:id`, validated; `undefined` if it isn't a session id. */
const sessionParam = Effect.map(HttpRouter.params, (params) => {
  const id = params.id
  return id !== undefined && SessionId.is(id) ? id : undefined
})

/** `Last-Event-ID`: the seq of the last entry the page has, when it reconnects. */
const lastEventId = Effect.map(HttpServerRequest.HttpServerRequest, (request) => {
  const header = request.headers["last-event-id"]
  const seq = header === undefined ? Number.NaN : Number(header)
  return Number.isSafeInteger(seq) && seq >= 0 ? seq : undefined
})

/**
 * The routes, the security headers and the `Host` check, for `HttpRouter.serve`.
 *
 * @since 0.2.0
 * @category layers
 */
export const routes: Layer.Layer<never, never, HttpRouter.HttpRouter | HttpServer.HttpServer | CheckedSessionLog | ProjectionStore> =
  Layer.effectDiscard(Effect.gen(function*() {
    const router = yield* HttpRouter.HttpRouter
    const server = yield* HttpServer.HttpServer
    const context = yield* Effect.context<CheckedSessionLog | ProjectionStore>()
    const address = server.address
    const hosts = address._tag === "UnixPathAddress" ? undefined : allowedHosts(NetAddress.formatHost(address), address.port)

    yield* router.addGlobalMiddleware((handle) =>
      Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
        const refused = request.method !== "GET"
          ? Option.some(HttpServerResponse.text("read-only: only GET is answered", { status: 405, headers: { allow: "GET" } }))
          : hosts !== undefined && !hosts.has(request.headers.host ?? "")
          ? Option.some(text(421, "this view answers only to its own loopback address"))
          : Option.none()
        return Effect.map(
          Option.isSome(refused) ? Effect.succeed(refused.value) : handle,
          HttpServerResponse.setHeaders(securityHeaders)
        )
      })
    )

    const page = HttpServerResponse.text(Page.html, { contentType: "text/html; charset=utf-8" })
    yield* router.add("GET", "/", page)
    yield* router.add(
      "GET",
      "/session/:id",
      Effect.map(sessionParam, (id) => id === undefined ? text(400, "invalid session id") : page)
    )
    yield* router.add("GET", "/app.js", HttpServerResponse.text(Client.script, { contentType: "text/javascript; charset=utf-8" }))
    yield* router.add("GET", "/favicon.svg", HttpServerResponse.text(Page.icon, { contentType: "image/svg+xml" }))
    yield* router.add("GET", "/app.css", HttpServerResponse.text(Page.css, { contentType: "text/css; charset=utf-8" }))
    yield* router.add("GET", "/events", sse(Stream.provideContext(Feed.overview, context)))
    yield* router.add(
      "GET",
      "/events/session/:id",
      Effect.gen(function*() {
        const id = yield* sessionParam
        if (id === undefined) return text(400, "invalid session id")
        return sse(Stream.provideContext(Feed.session(id, yield* lastEventId), context))
      })
    )
    // Anything else, with the same headers as the rest.
    yield* router.add("GET", "/*", text(404, "not found"))
  }))

/**
 * The web view, served on the `HttpServer` provided: its routes on Effect's router (path segments
 * as long as a session id can be, so an over-long one is refused as an invalid id), without a log
 * line per request.
 *
 * @since 0.2.0
 * @category layers
 */
export const layer: Layer.Layer<never, never, HttpServer.HttpServer | CheckedSessionLog | ProjectionStore> = HttpRouter
  .serve(routes, { disableLogger: true, disableListenLog: true, routerConfig: { maxParamLength: 1024 } })
