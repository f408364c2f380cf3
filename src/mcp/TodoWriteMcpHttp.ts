/**
 * `todo_write` over MCP Streamable HTTP (Effect's `McpServer.layerHttp`), one todo session per
 * client. The session comes from the URL, `<path>/<session-id>` (validated like every id), or, on
 * `<path>` alone, is named after the MCP session the server issues at `initialize`: either way every
 * response says which in the `Todo-Session-Id` header, and a new one is logged. Reconnecting to
 * `<path>/<id>` continues a session, on this instance or any other sharing the store.
 *
 * A client names its parent session when it connects, with the `Todo-Parent-Session-Id` header or
 * `?parent=<id>`: the server links the two logs as `Subagent.link` does (refusing cycles and
 * sessions past the bounds with `409` before the MCP session exists), and records the child's end
 * (`closed`) when the client ends its MCP session (`DELETE`).
 *
 * Access: the URL is the capability. Whoever can reach the server and names a session can read and
 * write it, so session ids a server issues are random UUIDs, and anything beyond loopback needs a
 * bearer token (`HttpAccess`), which admits a client to the deployment, not to particular sessions.
 *
 * @since 0.2.0
 */
import type * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Semaphore from "effect/Semaphore"
import * as McpProtocol from "effect/ai/McpProtocol"
import * as McpServer from "effect/ai/McpServer"
import * as HttpEffect from "effect/http/HttpEffect"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import type { CheckedSessionLog } from "../log/CheckedSessionLog.ts"
import * as SessionId from "../log/SessionId.ts"
import type { SessionLogError } from "../log/SessionLogError.ts"
import type { ProjectionStore } from "../projection/ProjectionStore.ts"
import { AgentSession } from "../todo/AgentSession.ts"
import * as Subagent from "../todo/Subagent.ts"
import type { SubagentError } from "../todo/SubagentError.ts"
import type { TodoPolicy } from "../todo/TodoPolicy.ts"
import * as TodoWriteMcp from "./TodoWriteMcp.ts"

/**
 * The response header that names the todo session a request wrote to.
 *
 * @since 0.2.0
 * @category constants
 */
export const sessionHeader = "todo-session-id"

/**
 * The request header in which a connecting client names its parent session.
 *
 * @since 0.2.0
 * @category constants
 */
export const parentHeader = "todo-parent-session-id"

/**
 * The MCP revisions served: the sessionful ones, since a client without a session in its URL is
 * known by its `Mcp-Session-Id`.
 *
 * @since 0.2.0
 * @category constants
 */
export const protocols = [
  McpProtocol.v2025_11_25,
  McpProtocol.v2025_06_18,
  McpProtocol.v2025_03_26,
  McpProtocol.v2024_11_05
] as const

/**
 * The router settings the endpoint needs: path segments as long as the longest session id (the
 * router's default stops at 100). Pass it as `HttpRouter.serve(app, { routerConfig })`.
 *
 * @since 0.2.0
 * @category constants
 */
export const routerConfig = { maxParamLength: SessionId.maxLength } as const

/**
 * Where the endpoint lives and what it tells clients about itself.
 *
 * @since 0.2.0
 * @category models
 */
export interface Options {
  /** The endpoint; sessions are `<path>/<session-id>`. Default `/mcp`. */
  readonly path?: `/${string}` | undefined
  readonly name: string
  readonly version: string
  /** Bounds for sub-agent links made by connecting clients. Default `Subagent.defaultLimits`. */
  readonly limits?: Subagent.Limits | undefined
  /** Browser origins allowed to call the endpoint; requests with any other `Origin` are refused. */
  readonly allowedOrigins?: ReadonlyArray<string> | undefined
}

const text = (status: number, body: string) => HttpServerResponse.text(body, { status })

/** A refused link is a conflict the client can act on; a failed store is the server's trouble. */
const responseTo = (error: SubagentError | SessionLogError) =>
  error._tag === "SubagentError" ? text(409, error.message) : text(503, error.message)

const idOf = (value: string | undefined): SessionId.SessionId | undefined =>
  value !== undefined && SessionId.is(value) ? value : undefined

/** Resolves the request's session and parent, links on connect, and provides the `AgentSession`. */
const sessions = (limits: Subagent.Limits) =>
  HttpRouter.middleware(Effect.gen(function*() {
    const services = yield* Effect.context<CheckedSessionLog | ProjectionStore>()
    // Links are rare: one at a time, so concurrent connects can't overshoot a bound between check and write.
    const linking = yield* Semaphore.make(1)
    /** Runs a link step; answers the refusal to send instead of the MCP response, if any. */
    const refusal = <A>(step: Effect.Effect<A, SubagentError | SessionLogError, CheckedSessionLog | ProjectionStore>) =>
      Effect.provideContext(step, services).pipe(
        Effect.as(undefined),
        Effect.catch((error) => Effect.succeed(responseTo(error)))
      )
    const end = (child: SessionId.SessionId) =>
      Effect.provideContext(Subagent.end(child, "closed"), services).pipe(
        Effect.catch((error) => Effect.logWarning(`todo-write: could not record the end of ${child}`, error))
      )
    /** After a successful `initialize`: names a new session, links it to its parent, says which it is. */
    const connected = (
      response: HttpServerResponse.HttpServerResponse,
      fromUrl: SessionId.SessionId | undefined,
      parent: SessionId.SessionId | undefined
    ) =>
      Effect.gen(function*() {
        const issued = response.headers["mcp-session-id"]
        if (issued === undefined) return response
        const session = fromUrl ?? idOf(issued)
        if (session === undefined) return text(500, "the MCP session id is not a valid session id")
        if (fromUrl === undefined) yield* Effect.logInfo(`todo-write: new session ${session}`)
        const refused = parent === undefined ? undefined : yield* refusal(linking.withPermit(Subagent.link(parent, session, limits)))
        if (refused !== undefined) return refused
        return HttpServerResponse.setHeader(response, sessionHeader, session)
      })

    return (httpEffect) => Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const fromUrl = (yield* HttpRouter.params).session
      const mcpSession = request.headers["mcp-session-id"]
      const session = idOf(fromUrl ?? mcpSession)
      if (fromUrl !== undefined && session === undefined) {
        return text(400, `invalid session id in the URL: expected letters, digits, '_' and '-', at most ${SessionId.maxLength}`)
      }
      // A session header this server never issued, as the MCP runtime itself answers it.
      if (session === undefined && mcpSession !== undefined) return HttpServerResponse.empty({ status: 404 })
      const named = request.headers[parentHeader] ?? (yield* HttpServerRequest.ParsedSearchParams).parent
      const parent = typeof named === "string" ? idOf(named) : undefined
      if (named !== undefined && parent === undefined) return text(400, "invalid parent session id")
      const connecting = request.method === "POST" && mcpSession === undefined
      const refused = connecting && parent !== undefined
        ? yield* refusal(Subagent.check(parent, session, limits))
        : undefined
      if (refused !== undefined) return refused
      const response = yield* (session === undefined
        ? httpEffect
        : Effect.provideService(httpEffect, AgentSession, AgentSession.of({ sessionId: session })))
      if (connecting) {
        // The MCP runtime sets `Mcp-Session-Id` in a pre-response handler; one appended now runs after it.
        yield* HttpEffect.appendPreResponseHandler((_, answer) => connected(answer, session, parent))
        return response
      }
      if (session === undefined) return response
      if (request.method === "DELETE" && response.status === 204) yield* end(session)
      return HttpServerResponse.setHeader(response, sessionHeader, session)
    })
  }))

/**
 * The endpoint's routes, on the `HttpRouter` in context; serve it with `HttpRouter.serve`, beside
 * `HttpAccess.layer`. It provides the `McpServer`, for more registrations beside `todo_write`.
 *
 * @since 0.2.0
 * @category layers
 */
export const layer = (options: Options): Layer.Layer<
  McpServer.McpServer | McpServer.McpRequest.From<"Requires", McpServer.ProvidedServices<typeof protocols, true>>,
  Cause.IllegalArgumentError,
  HttpRouter.HttpRouter | TodoPolicy | CheckedSessionLog | ProjectionStore
> =>
  McpServer.layerHttp({
    name: options.name,
    version: options.version,
    path: `${options.path ?? "/mcp"}/:session?`,
    protocols,
    allowSessionTermination: true,
    allowedOrigins: options.allowedOrigins,
    registrations: TodoWriteMcp.layer
  }).pipe(
    Layer.provide(sessions(options.limits ?? Subagent.defaultLimits).layer)
  )
