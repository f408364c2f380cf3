/**
 * `todo_write` over MCP Streamable HTTP, driven by the official MCP SDK client against a real HTTP
 * server on a loopback port (and one on every interface, with a token).
 */
import { NodeHttpServer } from "@effect/platform-node"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { assert, describe, it, layer } from "@effect/vitest"
import { Effect, Layer, Redacted, Stream } from "effect"
import { HttpRouter, HttpServer } from "effect/http"
import { NetAddress } from "effect/net"
import { createServer } from "node:http"
import { CheckedSessionLog } from "../../src/log/CheckedSessionLog.ts"
import * as SessionId from "../../src/log/SessionId.ts"
import * as SessionLog from "../../src/log/SessionLog.ts"
import * as HttpAccess from "../../src/mcp/HttpAccess.ts"
import * as TodoWriteMcpHttp from "../../src/mcp/TodoWriteMcpHttp.ts"
import * as ProjectionStore from "../../src/projection/ProjectionStore.ts"
import * as SubagentEvents from "../../src/todo/SubagentEvents.ts"
import * as TodoPolicy from "../../src/todo/TodoPolicy.ts"

const Env = ProjectionStore.layer.pipe(
  Layer.provideMerge(SubagentEvents.layerChecked),
  Layer.provideMerge(SessionLog.layerMemory),
  Layer.merge(TodoPolicy.layer({ allowParallelInProgress: false }))
)

const serve = (host: string, access: HttpAccess.Options) =>
  HttpRouter.serve(
    Layer.mergeAll(
      TodoWriteMcpHttp.layer({ name: "todo-write-test", version: "0", limits: { maxDepth: 2, maxChildren: 8 } }),
      HttpAccess.layer(access)
    ),
    { disableLogger: true, disableListenLog: true, routerConfig: TodoWriteMcpHttp.routerConfig }
  ).pipe(Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host })))

/** The server's base URL, always through 127.0.0.1. */
const baseUrl = Effect.map(HttpServer.HttpServer, ({ address }) =>
  NetAddress.isInetAddress(address) ? `http://127.0.0.1:${address.port}` : "")

const connect = (url: string, headers: Record<string, string> = {}) =>
  Effect.promise(async () => {
    const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } })
    const client = new Client({ name: "sdk-http-test", version: "1.0.0" })
    await client.connect(transport)
    return { client, transport }
  })

type ToolResult = { isError?: boolean; content: Array<{ type: string; text?: string }> }

const call = (client: Client, todos: ReadonlyArray<{ content: string; status: string }>) =>
  Effect.promise(() => client.callTool({ name: "todo_write", arguments: { todos } }) as Promise<ToolResult>)

const eventsOf = (session: string) =>
  Effect.gen(function*() {
    const log = yield* CheckedSessionLog
    return yield* Stream.runCollect(log.read(SessionId.decodeSync(session)))
  })

const initialize = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "0" } }
})
const post = (url: string, body: BodyInit, headers: Record<string, string> = {}) =>
  Effect.promise(() =>
    fetch(url, {
      method: "POST",
      body,
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
      ...(body instanceof ReadableStream ? { duplex: "half" } : {})
    })
  )

layer(serve("127.0.0.1", { maxBodyBytes: 64 * 1024 }).pipe(Layer.provideMerge(Env)), { excludeTestServices: true })("on loopback", (it) => {
  it.effect("50 concurrent clients, each its own session: all answered, each log contiguous and its own", () =>
    Effect.gen(function*() {
      const base = yield* baseUrl
      const clients = 50
      yield* Effect.forEach(Array.from({ length: clients }, (_, i) => i), (i) =>
        Effect.gen(function*() {
          const { client } = yield* connect(`${base}/mcp/load-${i}`)
          for (let step = 0; step < 3; step++) {
            const result = yield* call(client, [{ content: `client ${i} step ${step}`, status: "in_progress" }])
            assert.notStrictEqual(result.isError, true, result.content[0]?.text)
            assert.strictEqual(result.content[0]?.text, "Updated todo list: 0 pending, 1 in progress, 0 completed.")
          }
          yield* Effect.promise(() => client.close())
        }), { concurrency: "unbounded", discard: true })
      for (let i = 0; i < clients; i++) {
        const events = yield* eventsOf(`load-${i}`)
        assert.deepStrictEqual(events.map((e) => e.seq), [0, 1, 2])
        assert.deepStrictEqual(
          events.map((e) => (e.data as { todos: Array<{ content: string }> }).todos[0]!.content),
          [0, 1, 2].map((step) => `client ${i} step ${step}`)
        )
      }
    }), 60_000)

  it.effect("without a session in the URL, the MCP session names a new one, returned in a header", () =>
    Effect.gen(function*() {
      const base = yield* baseUrl
      const { client, transport } = yield* connect(`${base}/mcp`)
      yield* call(client, [{ content: "Unnamed", status: "pending" }])
      const session = transport.sessionId!
      assert.isTrue(SessionId.is(session))
      assert.strictEqual((yield* eventsOf(session)).length, 1)
      yield* Effect.promise(() => client.close())

      const raw = yield* post(`${base}/mcp`, initialize)
      assert.strictEqual(raw.status, 200)
      assert.strictEqual(raw.headers.get("todo-session-id"), raw.headers.get("mcp-session-id"))
      const named = yield* post(`${base}/mcp/named-one`, initialize)
      assert.strictEqual(named.headers.get("todo-session-id"), "named-one")
    }))

  it.effect("every rejection is still an isError tool result", () =>
    Effect.gen(function*() {
      const { client } = yield* connect(`${yield* baseUrl}/mcp/rejections`)
      const result = yield* call(client, [{ content: "a", status: "in_progress" }, { content: "b", status: "in_progress" }])
      assert.isTrue(result.isError)
      assert.include(result.content[0]!.text, "(too_many_in_progress)")
      yield* Effect.promise(() => client.close())
    }))

  it.effect("hostile session ids are refused before anything is read or written", () =>
    Effect.gen(function*() {
      const base = yield* baseUrl
      const before = yield* (yield* CheckedSessionLog).sessions
      for (const id of ["..%2F..%2Fetc%2Fpasswd", "con", "a.b", "%00", "-x", "%E2%80%AE", "a%20b"]) {
        const response = yield* post(`${base}/mcp/${id}`, initialize)
        assert.strictEqual(response.status, 400, id)
        assert.include(yield* Effect.promise(() => response.text()), "invalid session id")
      }
      // the router refuses a path segment longer than the longest id; the longest id itself is served
      assert.strictEqual((yield* post(`${base}/mcp/${"x".repeat(SessionId.maxLength + 1)}`, initialize)).status, 404)
      assert.strictEqual((yield* post(`${base}/mcp/${"x".repeat(SessionId.maxLength)}`, initialize)).status, 200)
      for (const path of ["/mcp/a/b", "/mcp/../../etc/passwd"]) {
        assert.strictEqual((yield* post(`${base}${path}`, initialize)).status, 404, path)
      }
      const parent = yield* post(`${base}/mcp/fine`, initialize, { "todo-parent-session-id": "../up" })
      assert.strictEqual(parent.status, 400)
      const forged = yield* post(`${base}/mcp`, initialize, { "mcp-session-id": "../../etc" })
      assert.strictEqual(forged.status, 404)
      assert.deepStrictEqual(yield* (yield* CheckedSessionLog).sessions, before)
    }))

  it.effect("oversized bodies are refused, declared or streamed", () =>
    Effect.gen(function*() {
      const base = yield* baseUrl
      const big = JSON.stringify({ padding: "x".repeat(100 * 1024) })
      assert.strictEqual((yield* post(`${base}/mcp/big`, big)).status, 413)
      const chunks = Stream.make(big.slice(0, 50 * 1024), big.slice(50 * 1024)).pipe(Stream.encodeText)
      const streamed = yield* post(`${base}/mcp/big`, Stream.toReadableStream(chunks))
      assert.strictEqual(streamed.status, 413)
      assert.strictEqual((yield* eventsOf("big")).length, 0)
    }))

  it.effect("a client names its parent when it connects: the link is in both logs, and ends when it leaves", () =>
    Effect.gen(function*() {
      const base = yield* baseUrl
      const { client: parent } = yield* connect(`${base}/mcp/boss`)
      yield* call(parent, [{ content: "Delegate", status: "in_progress" }])
      const { client, transport } = yield* connect(`${base}/mcp/helper`, { "todo-parent-session-id": "boss" })
      yield* call(client, [{ content: "Help", status: "in_progress" }])
      const unnamed = yield* connect(`${base}/mcp?parent=boss`)
      yield* Effect.promise(() => transport.terminateSession())
      const types = (yield* eventsOf("boss")).map((e) => [e.type, e.data])
      assert.deepStrictEqual(types.slice(1), [
        ["subagent/start", { child: "helper" }],
        ["subagent/start", { child: unnamed.transport.sessionId }],
        ["subagent/end", { child: "helper", reason: "closed" }]
      ])
      assert.deepStrictEqual((yield* eventsOf("helper")).map((e) => e.type), ["subagent/parent", "todo/write"])

      // a cycle, a session past the depth bound, and an existing session are refused with 409
      const cycle = yield* post(`${base}/mcp/boss`, initialize, { "todo-parent-session-id": "helper" })
      assert.strictEqual(cycle.status, 409)
      assert.include(yield* Effect.promise(() => cycle.text()), "its own ancestor")
      yield* connect(`${base}/mcp/deep-1`, { "todo-parent-session-id": "helper" })
      const deep = yield* post(`${base}/mcp/deep-2`, initialize, { "todo-parent-session-id": "deep-1" })
      assert.strictEqual(deep.status, 409)
      assert.include(yield* Effect.promise(() => deep.text()), "more than the 2 allowed")
      assert.strictEqual((yield* eventsOf("deep-2")).length, 0)
      yield* Effect.promise(() => Promise.all([parent.close(), client.close(), unnamed.client.close()]))
    }))
})

const token = "a-long-random-test-token-0123456789"

layer(serve("0.0.0.0", { token: Redacted.make(token) }).pipe(Layer.provideMerge(Env)), { excludeTestServices: true })("off loopback, with a token", (it) => {
  it.effect("every request needs the bearer token; a 401 says nothing about sessions", () =>
    Effect.gen(function*() {
      const base = yield* baseUrl
      const { client } = yield* connect(`${base}/mcp/guarded`, { authorization: `Bearer ${token}` })
      assert.notStrictEqual((yield* call(client, [{ content: "Safe", status: "pending" }])).isError, true)
      yield* Effect.promise(() => client.close())
      for (const headers of [{}, { authorization: "Bearer wrong" }, { authorization: token }]) {
        for (const path of ["/mcp/guarded", "/mcp/missing", "/nowhere"]) {
          const response = yield* post(`${base}${path}`, initialize, headers)
          assert.strictEqual(response.status, 401)
          assert.strictEqual(yield* Effect.promise(() => response.text()), "")
        }
      }
      const refused = yield* Effect.exit(connect(`${base}/mcp/guarded`))
      assert.strictEqual(refused._tag, "Failure")
      assert.strictEqual((yield* eventsOf("guarded")).length, 1)
    }))
})

describe("off loopback, without a token", () => {
  it.effect("the server refuses to start", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Layer.build(serve("0.0.0.0", {}).pipe(Layer.provide(Env))))
      assert.strictEqual(error._tag, "Unprotected")
      assert.include(error.message, "needs a bearer token")
      const empty = yield* Effect.flip(Layer.build(serve("0.0.0.0", { token: Redacted.make("") }).pipe(Layer.provide(Env))))
      assert.strictEqual(empty.message, "the bearer token is empty")
    }).pipe(Effect.scoped))
})
