/**
 * Who may reach an HTTP deployment, checked before any route runs: a bearer token when one is
 * configured (compared in constant time; a missing or wrong one is a bare `401`, before routing, so
 * it reveals nothing about which sessions exist), and a bounded request body (a declared length over
 * the bound is refused before reading, an undeclared one stops being read at the bound: `413`).
 * Without a token the deployment must listen on loopback only: `layer` refuses to start otherwise.
 *
 * @since 0.2.0
 */
import * as ByteSize from "effect/ByteSize"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as Digest from "effect/crypto/Digest"
import * as Mac from "effect/crypto/Mac"
import * as HttpIncomingMessage from "effect/http/HttpIncomingMessage"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServer from "effect/http/HttpServer"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as NetAddress from "effect/net/NetAddress"

/**
 * The body bound used when none is given: 1 MiB, ten times the largest list the default policy
 * accepts.
 *
 * @since 0.2.0
 * @category constants
 */
export const defaultMaxBodyBytes = 1_048_576

/**
 * What `layer` needs: the token every request must carry, if any, and the body bound.
 *
 * @since 0.2.0
 * @category models
 */
export interface Options {
  /** Every request must send `Authorization: Bearer <token>`. Required off loopback. */
  readonly token?: Redacted.Redacted<string> | undefined
  /** The largest request body accepted, in bytes. Default `defaultMaxBodyBytes`. */
  readonly maxBodyBytes?: number | undefined
}

/**
 * The server listens beyond loopback with no token (or an empty one): anyone who can reach it could
 * write any session it can name.
 *
 * @since 0.2.0
 * @category errors
 */
export class Unprotected extends Schema.TaggedError<Unprotected>()("Unprotected", {
  address: Schema.String,
  message: Schema.String
}) {}

/**
 * Whether a listening address is reachable only from this machine: loopback (`127.0.0.0/8`, `::1`,
 * or IPv4 loopback mapped into IPv6) or a Unix socket.
 *
 * @since 0.2.0
 * @category guards
 */
export const isLocal = (address: NetAddress.SocketAddress): boolean => {
  if (!NetAddress.isInetAddress(address)) return true
  const ip = address.address
  if (NetAddress.isLoopback(ip)) return true
  return NetAddress.isIpv6Address(ip) && Option.exists(NetAddress.fromIpv4Mapped(ip), NetAddress.isLoopback)
}

const unauthorized = HttpServerResponse.empty({ status: 401, headers: { "www-authenticate": "Bearer" } })
const tooLarge = HttpServerResponse.text("request body too large", { status: 413 })
const unreadable = HttpServerResponse.text("request body unreadable", { status: 400 })

const bearer = (header: string | undefined): string =>
  header !== undefined && /^bearer /i.test(header) ? header.slice(7).trim() : ""

/**
 * The global middleware: token, then body bound, then the routes. Fails to build with
 * `Unprotected` when the server listens beyond loopback and no token is set, or the token is empty.
 *
 * @since 0.2.0
 * @category layers
 */
export const layer = (options: Options): Layer.Layer<never, Unprotected, HttpRouter.HttpRouter | HttpServer.HttpServer> =>
  HttpRouter.middleware(Effect.gen(function*() {
    const { address } = yield* HttpServer.HttpServer
    if (options.token === undefined && !isLocal(address)) {
      const where = NetAddress.formatSocketAddress(address)
      return yield* new Unprotected({
        address: where,
        message: `listening on ${where} needs a bearer token: only loopback may go without one`
      })
    }
    if (options.token !== undefined && Redacted.value(options.token).length === 0) {
      return yield* new Unprotected({ address: NetAddress.formatSocketAddress(address), message: "the bearer token is empty" })
    }
    const digest = yield* Digest.Digest
    const hash = (text: string) => digest.digest(Digest.sha256, new TextEncoder().encode(text))
    // Both sides hashed: equal lengths, so the comparison's time says nothing about the token.
    const expected = options.token === undefined ? undefined : yield* hash(Redacted.value(options.token))
    const max = options.maxBodyBytes ?? defaultMaxBodyBytes
    const limit = ByteSize.bytes(max)
    return (httpEffect) =>
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        if (expected !== undefined && !Mac.timingSafeEqual(expected, yield* hash(bearer(request.headers.authorization)))) {
          return unauthorized
        }
        const declared = request.headers["content-length"]
        if (declared !== undefined && !(Number(declared) <= max)) return tooLarge
        if (request.method === "POST" || request.method === "PUT" || request.method === "PATCH") {
          // Read now, bounded; the request caches the body for the route that parses it.
          const read = yield* Effect.exit(Effect.provideService(request.arrayBuffer, HttpIncomingMessage.MaxBodySize, limit))
          if (Exit.isFailure(read)) {
            const reason = Option.getOrUndefined(Exit.findErrorOption(read))?.reason
            return reason?._tag === "RequestParseError" && reason.reason === "BodyTooLarge" ? tooLarge : unreadable
          }
        }
        return yield* httpEffect
      })
  }), { global: true }).pipe(Layer.provide(Digest.layerWebCrypto))
