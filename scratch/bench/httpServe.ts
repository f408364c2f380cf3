/**
 * 7. Many agents, one deployment: 100 MCP clients (the official SDK's Streamable HTTP transport) × 20
 * `todo_write` calls each, all at once, against one `todo-write serve --http` process (JSONL files,
 * fsync per append), as calls per second and per-call latency; against the per-call cost of the stdio
 * server (`todo-write serve`, same store) driven by one SDK client, call after call, in the same run.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { spawn } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { type Comparison, compare, percentile } from "./harness.ts"

const bin = new URL("../../src/cli/bin.ts", import.meta.url).pathname
const clients = 100
const callsPerClient = 20
const stdioCalls = 200

const list = (step: number) => ({
  todos: [
    { content: "Read the code", status: step > 0 ? "completed" : "in_progress" },
    { content: "Change it", status: step > 0 ? "in_progress" : "pending" },
    { content: `Check step ${step}`, status: "pending" }
  ]
})

const call = async (client: Client, step: number, latencies: Array<number>) => {
  const start = process.hrtime.bigint()
  const result = await client.callTool({ name: "todo_write", arguments: list(step) })
  latencies.push(Number(process.hrtime.bigint() - start) / 1e6)
  if (result.isError === true) throw new Error(JSON.stringify(result.content))
}

/** A process's CPU time so far, in ms (Linux `/proc`; 0 elsewhere). */
const cpuTime = (pid: number | undefined): number => {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")
    return (Number(fields[11]) + Number(fields[12])) * 10
  } catch {
    return 0
  }
}

/** Starts `serve --http` on a free port; resolves with its base URL, its CPU time, and a way to stop it. */
const startHttp = (dir: string) =>
  new Promise<{ readonly url: string; readonly cpu: () => number; readonly stop: () => void }>((resolve, reject) => {
    const child = spawn(process.execPath, [bin, "serve", "--http", "--port", "0", "--dir", dir, "--in-progress", "single"], {
      stdio: ["ignore", "ignore", "pipe"]
    })
    let stderr = ""
    child.stderr.on("data", (chunk) => {
      stderr += chunk
      const port = stderr.match(/MCP Streamable HTTP at http:\/\/[^:]+:(\d+)\//)?.[1]
      if (port !== undefined) {
        resolve({ url: `http://127.0.0.1:${port}`, cpu: () => cpuTime(child.pid), stop: () => child.kill() })
      }
    })
    child.once("exit", (code) => reject(new Error(`serve --http exited with ${code}: ${stderr}`)))
  })

export const run = async (): Promise<ReadonlyArray<Comparison>> => {
  const dir = mkdtempSync(join(tmpdir(), "todo-write-bench-http-"))
  const server = await startHttp(join(dir, "http"))
  const http = await Promise.all(Array.from({ length: clients }, async (_, i) => {
    const client = new Client({ name: "bench-http", version: "0" })
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp/agent-${i}`)))
    return client
  }))
  const stdio = new Client({ name: "bench-stdio", version: "0" })
  await stdio.connect(new StdioClientTransport({
    command: process.execPath,
    args: [bin, "serve", "--dir", join(dir, "stdio"), "--session", "agent", "--in-progress", "single"],
    stderr: "ignore"
  }))
  const httpLatencies: Array<number> = []
  const stdioLatencies: Array<number> = []
  const serverCpuPerCall: Array<number> = []
  try {
    const result = await compare({
      name: `MCP over HTTP, ${clients} clients × ${callsPerClient} calls`,
      rounds: 3,
      target: async () => {
        const start = process.hrtime.bigint()
        const cpuBefore = server.cpu()
        await Promise.all(http.map(async (client) => {
          for (let step = 0; step < callsPerClient; step++) await call(client, step, httpLatencies)
        }))
        const elapsed = Number(process.hrtime.bigint() - start) / 1e3
        serverCpuPerCall.push((server.cpu() - cpuBefore) / (clients * callsPerClient))
        return elapsed / (clients * callsPerClient)
      },
      baseline: async () => {
        const start = process.hrtime.bigint()
        for (let step = 0; step < stdioCalls; step++) await call(stdio, step % callsPerClient, stdioLatencies)
        return Number(process.hrtime.bigint() - start) / 1e3 / stdioCalls
      },
      note: ""
    })
    const perSecond = 1e6 / result.target
    return [{
      ...result,
      note: `${Math.round(perSecond)} calls/s over HTTP; latency p50 ${percentile(httpLatencies, 50).toFixed(1)} ms, ` +
        `p99 ${percentile(httpLatencies, 99).toFixed(1)} ms; server CPU ${percentile(serverCpuPerCall, 50).toFixed(2)} ms/call; ` +
        `stdio one call at a time p50 ` +
        `${percentile(stdioLatencies, 50).toFixed(2)} ms, p99 ${percentile(stdioLatencies, 99).toFixed(2)} ms`
    }]
  } finally {
    await Promise.all([...http, stdio].map((client) => client.close()))
    server.stop()
    rmSync(dir, { recursive: true, force: true })
  }
}
