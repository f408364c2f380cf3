/**
 * The web view over HTTP, in this process over an in-memory log: the security headers, validated ids,
 * read-only and loopback-only answers, and the Server-Sent Events feeds (snapshots, live changes,
 * resuming after `Last-Event-ID`). The browser's side is in `WebView.browser.test.ts`.
 */
import { NodeHttpServer } from "@effect/platform-node"
import { assert, layer } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, Layer } from "effect"
import { HttpServer } from "effect/http"
import { createServer, request } from "node:http"
import { CheckedSessionLog } from "../../src/log/CheckedSessionLog.ts"
import * as SessionId from "../../src/log/SessionId.ts"
import * as SessionLog from "../../src/log/SessionLog.ts"
import * as ProjectionStore from "../../src/projection/ProjectionStore.ts"
import * as TodoEvents from "../../src/todo/TodoEvents.ts"
import * as WebView from "../../src/web/WebView.ts"

const Server = WebView.layer.pipe(
  Layer.provideMerge(NodeHttpServer.layer(createServer, { host: "127.0.0.1", port: 0, gracefulShutdownTimeout: 0 })),
  Layer.provideMerge(ProjectionStore.layer),
  Layer.provideMerge(TodoEvents.layerChecked),
  Layer.provide(SessionLog.layerMemory)
)

interface Reply {
  readonly status: number
  readonly headers: Record<string, string | Array<string> | undefined>
  readonly body: string
}

/** A GET (or `method`) to the server; with `until`, reads a stream until its body satisfies it, then hangs up. */
const get = (path: string, options: {
  readonly headers?: Record<string, string>
  readonly method?: string
  readonly until?: (body: string) => boolean
} = {}) =>
  Effect.flatMap(HttpServer.HttpServer, (server) =>
    Effect.callback<Reply>((resume) => {
      const address = server.address
      const port = address._tag === "UnixPathAddress" ? 0 : address.port
      const req = request({ host: "127.0.0.1", port, path, method: options.method ?? "GET", headers: options.headers }, (res) => {
        let body = ""
        const done = () => resume(Effect.succeed({ status: res.statusCode ?? 0, headers: res.headers, body }))
        res.setEncoding("utf8")
        res.on("data", (chunk: string) => {
          body += chunk
          if (options.until?.(body) === true) {
            done()
            req.destroy()
          }
        })
        res.on("end", done)
      })
      req.end()
      return Effect.sync(() => req.destroy())
    }))

interface SseEvent {
  readonly event: string
  readonly id: string | undefined
  readonly data: any
}

const events = (body: string): ReadonlyArray<SseEvent> =>
  body.split("\n\n").flatMap((block) => {
    const fields = new Map(block.split("\n").filter((line) => !line.startsWith(":")).map((line) => {
      const colon = line.indexOf(":")
      return [line.slice(0, colon), line.slice(colon + 1).trimStart()] as const
    }))
    const data = fields.get("data")
    return data === undefined ? [] : [{ event: fields.get("event") ?? "message", id: fields.get("id"), data: JSON.parse(data) }]
  })

const count = (event: string, n: number) => (body: string) => events(body).filter((e) => e.event === event).length >= n

const append = (session: string, type: string, data: unknown) =>
  Effect.flatMap(CheckedSessionLog, (log) => log.append(SessionId.decodeSync(session), type, data))

const hostile = "<img src=x onerror=alert(1)>"

layer(Server)("WebView", (it) => {
  it.effect("every answer carries the strict policy; the page itself holds no data", () =>
    Effect.gen(function*() {
      yield* append("policy", "todo/write", { todos: [{ content: "secret plan", status: "pending" }] })
      for (const path of ["/", "/session/policy", "/app.js", "/app.css", "/nope"]) {
        const reply = yield* get(path)
        assert.strictEqual(reply.headers["content-security-policy"], WebView.contentSecurityPolicy, path)
        assert.strictEqual(reply.headers["x-content-type-options"], "nosniff", path)
      }
      assert.notInclude(WebView.contentSecurityPolicy, "unsafe")
      assert.include(WebView.contentSecurityPolicy, "script-src 'self'")
      const page = yield* get("/")
      assert.strictEqual(page.status, 200)
      assert.match(String(page.headers["content-type"]), /^text\/html; charset=utf-8/)
      assert.notInclude(page.body, "secret plan")
      assert.notMatch(page.body, /<script>|<style>|\son\w+=/, "no inline script, style or handler")
      assert.match(String((yield* get("/app.js")).headers["content-type"]), /^text\/javascript/)
    }))

  it.effect("session ids in URLs are validated before any read", () =>
    Effect.gen(function*() {
      for (const path of ["/session/..%2F..%2Fetc%2Fpasswd", "/session/CON", "/session/-x", `/session/${"a".repeat(129)}`]) {
        const reply = yield* get(path)
        assert.strictEqual(reply.status, 400, path)
        assert.strictEqual(reply.body, "invalid session id")
      }
      assert.strictEqual((yield* get("/events/session/%3Cimg%3E")).status, 400)
      assert.strictEqual((yield* get("/session/fine_id-1")).status, 200)
    }))

  it.effect("read-only, and only to its own loopback address (no DNS rebinding)", () =>
    Effect.gen(function*() {
      for (const method of ["POST", "PUT", "DELETE"]) {
        const reply = yield* get("/", { method })
        assert.strictEqual(reply.status, 405, method)
        assert.strictEqual(reply.headers.allow, "GET")
      }
      assert.strictEqual((yield* get("/", { headers: { host: "rebound.example:80" } })).status, 421)
      const server = yield* HttpServer.HttpServer
      const port = server.address._tag === "UnixPathAddress" ? 0 : server.address.port
      assert.strictEqual((yield* get("/", { headers: { host: `localhost:${port}` } })).status, 200)
    }))

  it.effect("the overview feed sends every session, then each change; content stays data", () =>
    Effect.gen(function*() {
      yield* append("feed-a", "todo/write", { todos: [{ content: hostile, status: "in_progress" }] })
      const listening = yield* Deferred.make<void>()
      const reply = yield* Effect.forkChild(get("/events", {
        until: (body) => {
          if (body.includes("feed-a")) Deferred.doneUnsafe(listening, Exit.void)
          return events(body).some((e) => e.data.session === "feed-b")
        }
      }))
      yield* Deferred.await(listening) // the page has its snapshot; feed-b is new to it
      yield* append("feed-b", "todo/write", { todos: [{ content: "later", status: "pending" }] })
      const { headers, body } = yield* Fiber.join(reply)
      assert.match(String(headers["content-type"]), /^text\/event-stream/)
      const sessions = events(body).filter((e) => e.event === "session")
      const a = sessions.find((e) => e.data.session === "feed-a")!
      assert.deepStrictEqual(a.data.todos, [{ content: hostile, status: "in_progress" }])
      assert.strictEqual(a.data.events, 1)
      assert.strictEqual(sessions.at(-1)!.data.session, "feed-b")
    }))

  it.effect("a session's feed is its history; after Last-Event-ID it resumes with the next entry", () =>
    Effect.gen(function*() {
      const todo = (status: string) => ({ todos: [{ content: "step", status }] })
      yield* append("hist", "turn/start", {})
      yield* append("hist", "todo/write", todo("pending"))
      yield* append("hist", "note", { unknown: "to the view" })
      yield* append("hist", "todo/write", todo("in_progress"))
      yield* append("hist", "turn/end", { reason: "completed" })
      const all = events((yield* get("/events/session/hist", { until: count("entry", 4) })).body)
      assert.deepStrictEqual(all.map((e) => e.id), ["0", "1", "3", "4"])
      assert.deepStrictEqual(all.map((e) => e.data.type), ["turn/start", "todo/write", "todo/write", "turn/end"])
      assert.strictEqual(all[0]!.data.todos, null)
      assert.strictEqual(all[3]!.data.reason, "completed")
      assert.deepStrictEqual(all[3]!.data.todos, [{ content: "step", status: "in_progress" }], "the list at the turn's end")

      const listening = yield* Deferred.make<void>()
      const resumed = yield* Effect.forkChild(get("/events/session/hist", {
        headers: { "last-event-id": "3" },
        until: (body) => {
          if (count("entry", 1)(body)) Deferred.doneUnsafe(listening, Exit.void)
          return count("entry", 2)(body)
        }
      }))
      yield* Deferred.await(listening)
      yield* append("hist", "todo/write", todo("completed"))
      const again = events((yield* Fiber.join(resumed)).body)
      assert.deepStrictEqual(again.map((e) => e.id), ["4", "5"], "nothing before, nothing skipped")
      assert.deepStrictEqual(again[1]!.data.todos, [{ content: "step", status: "completed" }])
    }))
})
