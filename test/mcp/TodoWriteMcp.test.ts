import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, PlatformError, Stream } from "effect"
import { McpProtocol, McpServer, McpTest } from "effect/ai"
import * as AgentSession from "../../src/todo/AgentSession.ts"
import * as SessionId from "../../src/log/SessionId.ts"
import * as SessionLog from "../../src/log/SessionLog.ts"
import * as TodoPolicy from "../../src/todo/TodoPolicy.ts"
import * as TodoWriteMcp from "../../src/mcp/TodoWriteMcp.ts"
import * as TodoEvents from "../../src/todo/TodoEvents.ts"
import { fiveProblems } from "../todo/FiveProblems.ts"

const session = SessionId.decodeSync("mcp-session")

const client = (allowParallelInProgress: boolean) =>
  McpTest.makeClient(
    TodoWriteMcp.layer.pipe(
      Layer.provide(Layer.mergeAll(
        TodoPolicy.layer({ allowParallelInProgress }),
        AgentSession.layer(session)
      ))
    ),
    { protocols: [McpProtocol.v2025_11_25] }
  )

const Log = TodoEvents.layerChecked.pipe(Layer.provideMerge(SessionLog.layerMemory))

const textOf = (result: { readonly content: ReadonlyArray<unknown> }) =>
  (result.content[0] as { readonly text: string }).text

describe("TodoWriteMcp", () => {
  it.effect("lists todo_write with a closed schema and the policy's clause", () =>
    Effect.gen(function*() {
      const mcp = yield* client(true)
      const { tools } = yield* mcp.listTools()
      const tool = tools.find((t) => t.name === "todo_write")!
      assert.include(tool.description, "several only when work truly runs in parallel")
      assert.strictEqual(tool.inputSchema.additionalProperties, false)
      const items = (tool.inputSchema.properties!.todos as any).items
      assert.strictEqual(items.additionalProperties, false)
      assert.strictEqual(items.properties.evidence.type, "string")
      assert.include(tool.description, "may cite evidence")
    }).pipe(Effect.provide(Log)))

  it.effect("answers every problem of a call in one isError reply, as the library does", () =>
    Effect.gen(function*() {
      const mcp = yield* client(false)
      const result = yield* mcp.callTool({
        name: "todo_write",
        arguments: {
          todos: fiveProblems,
          priority: 1
        }
      })
      assert.strictEqual(result.isError, true)
      const text = textOf(result)
      assert.include(text, "Fix these 6 problems")
      const codes = [...text.matchAll(/\((\w+)\)$/gm)].map((m) => m[1])
      assert.deepStrictEqual(codes, [
        "excess_property",
        "invalid_status",
        "duplicate_content",
        "empty_content",
        "too_many_in_progress",
        "excess_property"
      ])
      assert.include(text, "priority: unknown property: the arguments hold only todos")
      assert.include(text, "todos[1] and todos[3] are both in_progress")
    }).pipe(Effect.provide(Log)))

  it.effect("takes evidence on completed items and answers it in the structured result", () =>
    Effect.gen(function*() {
      const mcp = yield* client(false)
      const ok = yield* mcp.callTool({
        name: "todo_write",
        arguments: { todos: [{ content: "Run the tests", status: "completed", evidence: "npm test: 3 passed" }] }
      })
      assert.notStrictEqual(ok.isError, true)
      assert.deepStrictEqual((ok.structuredContent as any).todos, [
        { content: "Run the tests", status: "completed", evidence: "npm test: 3 passed" }
      ])
    }).pipe(Effect.provide(Log)))

  it.effect("a good call answers one line of counts and the structured result, and is logged", () =>
    Effect.gen(function*() {
      const mcp = yield* client(false)
      const ok = yield* mcp.callTool({
        name: "todo_write",
        arguments: { todos: [{ content: " a ", status: "in_progress" }, { content: "b", status: "pending" }] }
      })
      assert.notStrictEqual(ok.isError, true)
      assert.strictEqual(textOf(ok), "Updated todo list: 1 pending, 1 in progress, 0 completed.")
      assert.deepStrictEqual(ok.structuredContent, {
        todos: [{ content: "a", status: "in_progress" }, { content: "b", status: "pending" }],
        counts: { pending: 1, in_progress: 1, completed: 0 }
      })
      const log = yield* SessionLog.SessionLog
      assert.strictEqual((yield* Stream.runCollect(log.read(session))).length, 1)
    }).pipe(Effect.provide(Log)))

  it.effect("every rejection, schema violations included, is an isError result with the coded message", () =>
    Effect.gen(function*() {
      const mcp = yield* client(false)
      const cases: ReadonlyArray<readonly [unknown, string]> = [
        [{ todos: [{ content: "a", status: "in_progress" }, { content: "b", status: "in_progress" }] }, "too_many_in_progress"],
        [{ todos: [{ content: "a", status: "pending", id: 3 }] }, "excess_property"],
        [{ todos: [{ content: "a", status: "pending" }], extra: true }, "excess_property"],
        [{ todos: [{ content: "a", status: "done" }] }, "invalid_status"],
        [{ todos: "a" }, "invalid_type"],
        [{}, "missing_key"]
      ]
      for (const [args, code] of cases) {
        const result = yield* mcp.callTool({ name: "todo_write", arguments: args as Record<string, unknown> })
        assert.strictEqual(result.isError, true, JSON.stringify(args))
        assert.include(textOf(result), `(${code})`)
        assert.include(textOf(result), "send the ENTIRE list again")
      }
      const log = yield* SessionLog.SessionLog
      assert.deepStrictEqual(yield* log.sessions, [])
    }).pipe(Effect.provide(Log)))

  it.effect("a storage failure is an isError result of one short line, without the path", () =>
    Effect.gen(function*() {
      const mcp = yield* client(false)
      const result = yield* mcp.callTool({ name: "todo_write", arguments: { todos: [{ content: "a", status: "pending" }] } })
      assert.strictEqual(result.isError, true)
      assert.include(textOf(result), "could not save the list (storage failed)")
      assert.notInclude(textOf(result), "/srv")
    }).pipe(Effect.provide(TodoEvents.layerChecked.pipe(Layer.provideMerge(Layer.effect(
      SessionLog.SessionLog,
      SessionLog.make({
        append: () =>
          Effect.fail(PlatformError.systemError({
            _tag: "Unknown",
            module: "FileSystem",
            method: "writeAll",
            pathOrDescriptor: "/srv/sessions/mcp-session.jsonl",
            description: "i/o error"
          })),
        read: () => Stream.empty,
        sessions: Effect.succeed([])
      })
    ))))))
})

describe("TodoWriteMcp.layer without a session fixed at build", () => {
  const perCall = (session: SessionId.SessionId | undefined) =>
    McpTest.makeClient(
      Layer.mergeAll(
        TodoWriteMcp.layer,
        // What a transport does per request: provide the caller's session around the call, or not.
        McpServer.middleware((effect) =>
          session === undefined ? effect : AgentSession.provide(session)(effect), { global: true })
      ).pipe(Layer.provide(TodoPolicy.layer({ allowParallelInProgress: false }))),
      { protocols: [McpProtocol.v2025_11_25] }
    )

  it.effect("writes each call to the session its request carries, and rejects a call that carries none", () =>
    Effect.gen(function*() {
      const carried = yield* perCall(SessionId.decodeSync("carried"))
      const ok = yield* carried.callTool({ name: "todo_write", arguments: { todos: [{ content: "a", status: "pending" }] } })
      assert.notStrictEqual(ok.isError, true)
      const log = yield* SessionLog.SessionLog
      assert.deepStrictEqual(yield* log.sessions, [SessionId.decodeSync("carried")])
      const none = yield* perCall(undefined)
      const rejected = yield* none.callTool({ name: "todo_write", arguments: { todos: [{ content: "a", status: "pending" }] } })
      assert.strictEqual(rejected.isError, true)
      assert.include(textOf(rejected), "requires an owning agent session")
    }).pipe(Effect.provide(Log)))
})
