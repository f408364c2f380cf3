/**
 * `todo-write serve` as an MCP client and an operator meet it: raw bytes on stdin, one JSON-RPC reply per
 * line on stdout, and a clear start or a clear refusal.
 */
import { assert, describe, it } from "@effect/vitest"
import { existsSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { cli, frame, initialize, serve, tempDirectory } from "./CliTest.ts"

const args = (dir: string, session = "raw") => ["--dir", dir, "--session", session, "--in-progress", "single"]
const list = (id: number) => frame({ id, method: "tools/list" })
const byId = (replies: Array<any>) => new Map(replies.map((reply) => [JSON.stringify(reply.id), reply]))

describe("serve: every line is answered on its own", () => {
  it("a garbage line gets -32700, and the valid requests in the same chunk are served", async () => {
    const server = serve(args(tempDirectory()))
    server.write(`garbage\n${initialize(1)}{"jsonrpc":"2.0","id":\n${list(2)}`)
    const replies = byId(await server.replies(4))
    const run = await server.end()
    assert.strictEqual(run.code, 0, run.stderr)
    assert.strictEqual(replies.get("1").result.serverInfo.name, "todo-write")
    assert.strictEqual(replies.get("2").result.tools[0].name, "todo_write")
    assert.strictEqual(replies.get("null").error.code, -32700)
    assert.match(replies.get("null").error.message, /^Parse error/)
    // both bad lines are answered, each once
    assert.strictEqual(run.stdout.trim().split("\n").filter((line) => line.includes("-32700")).length, 2)
  }, 30_000)

  it("nesting 5,000 deep is refused as one invalid request; the lines around it are served", async () => {
    const server = serve(args(tempDirectory()))
    const deep = `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":${"[".repeat(5000)}${"]".repeat(5000)}}\n`
    server.write(initialize(1) + deep + list(2))
    const replies = byId(await server.replies(3))
    const run = await server.end()
    assert.strictEqual(run.code, 0, run.stderr)
    assert.strictEqual(replies.get("3").error.code, -32600)
    assert.include(replies.get("3").error.message, "nested deeper than")
    assert.strictEqual(replies.get("2").result.tools[0].name, "todo_write")
    assert.notInclude(run.stderr, "RangeError")
  }, 30_000)

  it("a line over the length bound is refused without being buffered whole; the next one is served", async () => {
    const server = serve(args(tempDirectory()))
    server.write(initialize(1))
    await server.replies(1)
    server.write(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"x":"${"x".repeat(5 * 1024 * 1024)}"}}\n`)
    server.write(list(2))
    const replies = byId(await server.replies(3))
    await server.end()
    assert.strictEqual(replies.get("null").error.code, -32600)
    assert.include(replies.get("null").error.message, "longer than")
    assert.strictEqual(replies.get("2").result.tools[0].name, "todo_write")
  }, 30_000)

  it("a call before initialize gets a JSON-RPC error that says so; ping is answered", async () => {
    const server = serve(args(tempDirectory()))
    server.write(list(1) + frame({ id: 2, method: "ping" }) + frame({ method: "notifications/cancelled", params: {} }))
    const replies = byId(await server.replies(2))
    server.write(initialize(3) + list(4))
    const after = byId((await server.replies(4)).slice(2))
    await server.end()
    assert.strictEqual(replies.get("1").error.code, -32002)
    assert.include(replies.get("1").error.message, "initialize")
    assert.deepStrictEqual(replies.get("2").result, {})
    assert.strictEqual(after.get("4").result.tools[0].name, "todo_write")
  }, 30_000)
})

describe("serve: starts clearly or refuses clearly", () => {
  it("prints the absolute directory, holds the session's lock from the start, and exits 0 when stdin closes", async () => {
    const cwd = tempDirectory()
    const first = serve(args("relative/sessions", "held"), { cwd })
    const banner = await first.stderrIncludes("serving")
    assert.include(banner, join(cwd, "relative/sessions"))
    assert.isTrue(existsSync(join(cwd, "relative/sessions", "held.lock")))

    const second = await cli(["serve", ...args("relative/sessions", "held")], { cwd })
    assert.notStrictEqual(second.code, 0)
    assert.strictEqual(second.stdout, "")
    const lines = second.stderr.trim().split("\n")
    assert.strictEqual(lines.length, 1, second.stderr)
    assert.include(lines[0], "locked")
    assert.include(lines[0], `process ${first.pid}`)
    assert.notInclude(second.stderr, "serving")

    const run = await first.end()
    assert.strictEqual(run.code, 0, run.stderr)
    assert.isFalse(existsSync(join(cwd, "relative/sessions", "held.lock")))
  }, 30_000)

  it("an unusable --dir is one line on stderr and a non-zero exit, before any banner", async () => {
    const file = join(tempDirectory(), "a-file")
    writeFileSync(file, "")
    const run = await cli(["serve", ...args(join(file, "sessions"))])
    assert.notStrictEqual(run.code, 0)
    assert.strictEqual(run.stdout, "")
    const lines = run.stderr.trim().split("\n")
    assert.strictEqual(lines.length, 1, run.stderr)
    assert.include(lines[0], join(file, "sessions"))
    assert.notInclude(run.stderr, "serving")
  }, 30_000)

  it("a usage error writes nothing to stdout, the JSON-RPC channel: one error line and a hint on stderr", async () => {
    const run = await cli(["serve", "--dir", tempDirectory()])
    assert.notStrictEqual(run.code, 0)
    assert.strictEqual(run.stdout, "")
    assert.deepStrictEqual(run.stderr.trim().split("\n"), [
      "todo-write: Missing required flag: --in-progress",
      "Run `todo-write serve --help` for usage."
    ])
  }, 30_000)
})
