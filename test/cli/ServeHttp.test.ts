/**
 * `todo-write serve --http` as users run it: real processes, the official MCP SDK client over
 * Streamable HTTP; two instances sharing one PostgreSQL store. What the servers wrote is read back
 * with `show` and `verify` in this process.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { assert, describe, it } from "@effect/vitest"
import { type ChildProcess, execFile, spawn } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll } from "vitest"
import * as PgTest from "../log/sql/PgTest.ts"
import { inProcess } from "./CliTest.ts"
import { bin } from "../support/Executables.ts"

const cleanups: Array<() => void> = []
afterAll(() => cleanups.forEach((cleanup) => cleanup()))

/** Runs the executable to its end; resolves with its exit code and output. */
const cli = (args: ReadonlyArray<string>, env: Record<string, string> = {}) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(process.execPath, [bin, ...args], { timeout: 30_000, env: { ...process.env, ...env } }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : 1, stdout, stderr })
    })
  })

const tempDirectory = () => {
  const dir = mkdtempSync(join(tmpdir(), "todo-write-http-"))
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

/** Starts `serve --http` on a free port; resolves with its base URL (through 127.0.0.1) once it listens. */
const start = (args: ReadonlyArray<string>, env: Record<string, string> = {}) =>
  new Promise<{ readonly url: string; readonly child: ChildProcess }>((resolve, reject) => {
    const child = spawn(process.execPath, [bin, "serve", "--http", "--port", "0", ...args], {
      env: { ...process.env, ...env },
      stdio: ["ignore", "ignore", "pipe"]
    })
    cleanups.push(() => child.kill())
    let stderr = ""
    child.stderr!.on("data", (chunk) => {
      stderr += chunk
      const port = stderr.match(/MCP Streamable HTTP at http:\/\/[^:]+:(\d+)\//)?.[1]
      if (port !== undefined) resolve({ url: `http://127.0.0.1:${port}`, child })
    })
    child.once("exit", (code) => reject(new Error(`serve --http exited with ${code}: ${stderr}`)))
  })

const connect = async (url: string, headers: Record<string, string> = {}) => {
  const client = new Client({ name: "sdk-http-cli-test", version: "1.0.0" })
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }))
  return client
}

type ToolResult = { isError?: boolean; content: Array<{ type: string; text?: string }> }

const write = (client: Client, content: string) =>
  client.callTool({ name: "todo_write", arguments: { todos: [{ content, status: "in_progress" }] } }) as Promise<ToolResult>

describe("todo-write serve --http", () => {
  it.skipIf(PgTest.skipReason !== undefined)(
    "two instances on one PostgreSQL store: a client alternating between them writes one contiguous log",
    async () => {
      const env = { DATABASE_URL: PgTest.url }
      const session = `http-pg-${process.pid}-${Date.now()}`
      const [a, b] = await Promise.all([
        start(["--store", "postgres", "--in-progress", "single"], env),
        start(["--store", "postgres", "--in-progress", "single"], env)
      ])
      const clients = await Promise.all([connect(`${a.url}/mcp/${session}`), connect(`${b.url}/mcp/${session}`)])
      try {
        for (let step = 0; step < 10; step++) {
          const result = await write(clients[step % 2]!, `step ${step}`)
          assert.notStrictEqual(result.isError, true, result.content[0]?.text)
        }
      } finally {
        await Promise.all(clients.map((client) => client.close()))
      }
      const shown = await inProcess(["show", "--store", "postgres", "--json", "--history", "writes", session], { env })
      assert.strictEqual(shown.code, 0, shown.stderr)
      const replay = JSON.parse(shown.stdout)
      assert.strictEqual(replay.events, 10)
      assert.deepStrictEqual(
        replay.history.map((h: { seq: number; todos: Array<{ content: string }> }) => [h.seq, h.todos[0]!.content]),
        Array.from({ length: 10 }, (_, step) => [step, `step ${step}`])
      )
    },
    120_000
  )

  it("off loopback only with --token-file; every request must carry the token", async () => {
    const dir = tempDirectory()
    const refused = await cli(["serve", "--http", "--host", "0.0.0.0", "--port", "0", "--dir", dir, "--in-progress", "single"])
    assert.notStrictEqual(refused.code, 0)
    assert.include(refused.stderr + refused.stdout, "needs a bearer token")

    const tokenFile = join(dir, "token")
    const token = "0123456789abcdef-http-test-token"
    writeFileSync(tokenFile, `${token}\n`)
    const server = await start(["--host", "0.0.0.0", "--token-file", tokenFile, "--dir", dir, "--in-progress", "single"])
    const client = await connect(`${server.url}/mcp/tokened`, { authorization: `Bearer ${token}` })
    try {
      assert.notStrictEqual((await write(client, "Behind the token")).isError, true)
    } finally {
      await client.close()
    }
    const anonymous = await fetch(`${server.url}/mcp/tokened`, { method: "POST", body: "{}" })
    assert.strictEqual(anonymous.status, 401)
    const shown = await inProcess(["show", "--dir", dir, "--json", "tokened"])
    assert.deepStrictEqual(JSON.parse(shown.stdout).todos, [{ content: "Behind the token", status: "in_progress" }])
  }, 60_000)

  it("sub-agents connect naming their parent; show --tree prints the plan tree", async () => {
    const dir = tempDirectory()
    const server = await start(["--dir", dir, "--in-progress", "parallel"])
    const root = await connect(`${server.url}/mcp/root`)
    const a = await connect(`${server.url}/mcp/a`, { "todo-parent-session-id": "root" })
    const b = await connect(`${server.url}/mcp/b?parent=root`)
    const a1 = await connect(`${server.url}/mcp/a1`, { "todo-parent-session-id": "a" })
    try {
      await write(root, "Coordinate")
      await a.callTool({
        name: "todo_write",
        arguments: { todos: [{ content: "Parse", status: "completed" }, { content: "Check", status: "in_progress" }] }
      })
      await write(b, "Look around")
      await write(a1, "Dig")
    } finally {
      await Promise.all([root, a, b, a1].map((client) => client.close()))
    }
    const shown = await inProcess(["show", "--dir", dir, "--tree", "root"])
    assert.strictEqual(shown.code, 0, shown.stderr)
    assert.include(shown.stdout, "Session root\n[>] Coordinate")
    assert.include(shown.stdout, "-- sub-agent a: 1/2 completed, working on Check\n   [x] Parse\n   [>] Check")
    assert.include(shown.stdout, "   -- sub-agent a1: 0/1 completed, working on Dig\n      [>] Dig")
    assert.include(shown.stdout, "-- sub-agent b: 0/1 completed, working on Look around")
    const json = JSON.parse((await inProcess(["show", "--dir", dir, "--tree", "--json", "root"])).stdout)
    assert.deepStrictEqual(json.children.map((c: { session: string }) => c.session), ["a", "b"])
    assert.deepStrictEqual(json.children[0].children[0].todos, [{ content: "Dig", status: "in_progress" }])
    const verified = await inProcess(["verify", "--dir", dir])
    assert.strictEqual(verified.code, 0, verified.stdout)
  }, 90_000)
})
