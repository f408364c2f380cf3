import { assert, describe, it } from "@effect/vitest"
import { Effect, Sink, Stdio, Stream } from "effect"
import * as McpStdio from "../../src/mcp/McpStdio.ts"

const encoder = new TextEncoder()
const decoder = new TextDecoder()
const text = (chunk: string | Uint8Array) => typeof chunk === "string" ? chunk : decoder.decode(chunk)

/**
 * The checked `Stdio` over a fake one. Each run of its stdin reads the next input, given as chunks;
 * `written` is everything written to stdout, by the wrapper or by "the server".
 */
const fake = (inputs: ReadonlyArray<ReadonlyArray<string>>, options?: McpStdio.Options) =>
  Effect.gen(function*() {
    const written: Array<string> = []
    let run = 0
    const stdio = yield* McpStdio.make(options).pipe(
      Effect.provide(Stdio.layerTest({
        stdin: Stream.suspend(() => Stream.fromIterable((inputs[run++] ?? []).map((chunk) => encoder.encode(chunk)))),
        stdout: () => Sink.forEach((chunk: string | Uint8Array) => Effect.sync(() => written.push(text(chunk))))
      }))
    )
    /** Reads the next input through the wrapper: the lines passed on, and the lines answered here. */
    const read = Effect.gen(function*() {
      const before = written.length
      const chunks = yield* Stream.runCollect(stdio.stdin)
      const replies = written.slice(before).join("").split("\n").filter((line) => line.length > 0)
      return { forwarded: chunks.map(text).join(""), replies: replies.map((line) => JSON.parse(line)) }
    })
    const serverWrites = (line: string) => Stream.run(Stream.make(line), stdio.stdout())
    return { read, serverWrites }
  })

const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`
const list = (id: number) => `{"jsonrpc":"2.0","id":${id},"method":"tools/list"}`

describe("McpStdio", () => {
  it.effect("frames lines across chunks, drops CR and blank lines, and passes on a last line without newline", () =>
    Effect.gen(function*() {
      const { read } = yield* fake([[initialize.slice(0, 10), initialize.slice(10) + "\r\n\n  \n", list(2)]])
      const { forwarded, replies } = yield* read
      assert.strictEqual(forwarded, `${initialize}\n${list(2)}\n`)
      assert.deepStrictEqual(replies, [])
    }))

  it.effect("answers a line that isn't JSON with -32700 and id null, and passes on the rest", () =>
    Effect.gen(function*() {
      const { read } = yield* fake([[`${initialize}\n{"id":2,\n[1,2\n${list(3)}\n`]])
      const { forwarded, replies } = yield* read
      assert.strictEqual(forwarded, `${initialize}\n${list(3)}\n`)
      assert.deepStrictEqual(replies.map((r) => [r.id, r.error.code]), [[null, -32700], [null, -32700]])
    }))

  it.effect("bounds the nesting depth, answering with the request's id; brackets inside strings don't count", () =>
    Effect.gen(function*() {
      const { read } = yield* fake([[
        `${initialize}\n{"id":7,"method":"x","params":[[[1]]]}\n{"id":8,"method":"tools/call","params":{"a":"[[[[[["}}\n`
      ]], { maxDepth: 3 })
      const { forwarded, replies } = yield* read
      assert.deepStrictEqual(replies.map((r) => [r.id, r.error.code]), [[7, -32600]])
      assert.include(replies[0].error.message, "nested deeper than 3 levels")
      assert.strictEqual(forwarded, `${initialize}\n{"id":8,"method":"tools/call","params":{"a":"[[[[[["}}\n`)
    }))

  it.effect("drops an overlong line as it arrives, over any number of chunks, and answers it once", () =>
    Effect.gen(function*() {
      const x60 = "x".repeat(60)
      const { read } = yield* fake([[`${initialize}\n${x60}`, x60, `${x60}\n${list(2)}\n`]], { maxLineLength: 100 })
      const { forwarded, replies } = yield* read
      assert.strictEqual(forwarded, `${initialize}\n${list(2)}\n`)
      assert.deepStrictEqual(replies.map((r) => [r.id, r.error.code]), [[null, -32600]])
      assert.include(replies[0].error.message, "longer than 100 characters")
    }))

  it.effect("before initialize: requests are refused with -32002, ping is answered, notifications are dropped", () =>
    Effect.gen(function*() {
      const ping = `{"jsonrpc":"2.0","id":"p","method":"ping"}`
      const notification = `{"jsonrpc":"2.0","method":"notifications/x"}`
      const { read } = yield* fake([[`${list(1)}\n${ping}\n${notification}\n`]])
      const { forwarded, replies } = yield* read
      assert.strictEqual(forwarded, "")
      assert.deepStrictEqual(replies[0].error, {
        code: McpStdio.notInitializedCode,
        message: `Server not initialized: send "initialize" before "tools/list"`
      })
      assert.deepStrictEqual(replies[1], { jsonrpc: "2.0", id: "p", result: {} })
      assert.strictEqual(replies.length, 2)
    }))

  it.effect("the session opens with the server's result for initialize, not with its error", () =>
    Effect.gen(function*() {
      const inputs = [[initialize + "\n"], [list(2) + "\n"], [initialize + "\n"], [list(3) + "\n"]]
      const { read, serverWrites } = yield* fake(inputs)
      assert.strictEqual((yield* read).forwarded, initialize + "\n")
      yield* serverWrites(`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params"}}\n`)
      assert.strictEqual((yield* read).replies[0].error.code, McpStdio.notInitializedCode)
      yield* read
      yield* serverWrites(`{"jsonrpc":"2.0","id":1,"result":{}}\n`)
      const after = yield* read
      assert.strictEqual(after.forwarded, list(3) + "\n")
      assert.deepStrictEqual(after.replies, [])
    }))
})
