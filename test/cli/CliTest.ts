/**
 * Running the `todo-write` command in tests: as a user or an MCP client does, in real processes, or in
 * this process (`inProcess`) where the claim is about what a command does, not about its process.
 */
import { NodeServices } from "@effect/platform-node"
import { ConfigProvider, Effect, Exit, Layer, Option } from "effect"
import { Command } from "effect/cli"
import { TestConsole } from "effect/testing"
import { execFile, spawn } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { onTestFinished } from "vitest"
import * as Cli from "../../src/cli/Cli.ts"
import * as Output from "../../src/cli/Output.ts"
import * as Format from "../../src/log/file/Format.ts"
export { bin } from "../support/Executables.ts"
import { bin } from "../support/Executables.ts"

/**
 * A new temporary directory, removed when the test that made it finishes (a hook of the test, not of
 * this module, which workers share between files).
 */
export const tempDirectory = () => {
  const dir = mkdtempSync(join(tmpdir(), "todo-write-cli-"))
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

export interface Run {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/** Runs the executable to its end. */
export const cli = (
  args: ReadonlyArray<string>,
  options: { readonly cwd?: string; readonly env?: Record<string, string> } = {}
) =>
  new Promise<Run>((resolve) => {
    execFile(
      process.execPath,
      [bin, ...args],
      { cwd: options.cwd, timeout: 30_000, env: { ...process.env, ...options.env } },
      (error, stdout, stderr) => {
        resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : 1, stdout, stderr })
      }
    )
  })

/** A command run in this process: its stdout and stderr lines, and the message it failed with, if it did. */
export interface InProcess extends Run {
  readonly error: string | undefined
}

/**
 * Runs the command in this process as `Main.ts` does (`Command.runWith`, the CLI's `Output.layer`), its
 * console a TestConsole and its environment only `env`: a failure is code 1, its message, and the line
 * the executable prints on stderr.
 */
export const inProcess = (args: ReadonlyArray<string>, options: { readonly env?: Record<string, string> } = {}) =>
  Effect.runPromise(
    Effect.gen(function*() {
      const exit = yield* Effect.exit(Command.runWith(Cli.command, { version: Cli.version })(args))
      const error = Option.map(Exit.findErrorOption(exit), (error) => String((error as { message?: unknown }).message))
      const lines = (output: ReadonlyArray<unknown>) => output.map((line) => `${line}\n`).join("")
      return {
        code: Exit.isSuccess(exit) ? 0 : 1,
        stdout: lines(yield* TestConsole.logLines),
        stderr: lines(yield* TestConsole.errorLines),
        error: Option.getOrUndefined(error)
      }
    }).pipe(
      Effect.provide(Layer.mergeAll(
        NodeServices.layer,
        Output.layer,
        Layer.fresh(TestConsole.layer),
        ConfigProvider.layer(ConfigProvider.fromEnv({ env: options.env ?? {} }))
      ))
    )
  )

/** One JSON-RPC message as a line. */
export const frame = (message: object) => JSON.stringify({ jsonrpc: "2.0", ...message }) + "\n"

export const initialize = (id: number | string = 1) =>
  frame({
    id,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "0" } }
  })

/** A started `todo-write serve` process fed raw bytes, read line by line. */
export interface Served {
  readonly pid: number
  /** Writes raw bytes to its stdin. */
  readonly write: (data: string | Uint8Array) => void
  /** Resolves with the first `count` lines of its stdout, parsed. */
  readonly replies: (count: number) => Promise<Array<any>>
  /** Resolves once stderr holds `text`. */
  readonly stderrIncludes: (text: string) => Promise<string>
  /** Closes its stdin and resolves when it exits. */
  readonly end: () => Promise<Run>
  /** Resolves when it exits by itself. */
  readonly exited: Promise<Run>
}

/** Starts `todo-write serve` with these arguments. */
export const serve = (args: ReadonlyArray<string>, options: { readonly cwd?: string } = {}): Served => {
  const child = spawn(process.execPath, [bin, "serve", ...args], { cwd: options.cwd, stdio: "pipe" })
  // A test that fails before it ends the server doesn't leave it running.
  onTestFinished(() => void (child.exitCode === null && child.signalCode === null && child.kill()))
  let stdout = ""
  let stderr = ""
  // The first complete stdout line that is not a JSON-RPC message: stdout is the protocol's channel,
  // so anything else there (a banner, a log line) breaks the client; every wait then fails saying so.
  let stray: string | undefined
  const waiters: Array<() => void> = []
  const wake = () => waiters.splice(0).forEach((f) => f())
  const isJsonRpc = (line: string) => {
    try {
      return JSON.parse(line)?.jsonrpc === "2.0"
    } catch {
      return false
    }
  }
  child.stdout.on("data", (data) => {
    stdout += data
    stray ??= stdout.split("\n").slice(0, -1).find((line) => !isJsonRpc(line))
    wake()
  })
  child.stderr.on("data", (data) => (stderr += data, wake()))
  const exited = new Promise<Run>((resolve) =>
    child.on("exit", (code) => (wake(), resolve({ code: code ?? -1, stdout, stderr })))
  )
  const until = <A>(ready: () => A | undefined, what: () => string) =>
    new Promise<A>((resolve, reject) => {
      const check = () => {
        if (stray !== undefined) {
          return reject(new Error(`stdout, the JSON-RPC channel, carried a line that is not JSON-RPC: ${JSON.stringify(stray)}`))
        }
        const value = ready()
        if (value !== undefined) return resolve(value)
        if (child.exitCode !== null) {
          return reject(new Error(`exited (${child.exitCode}) before ${what()}; stderr: ${stderr}`))
        }
        waiters.push(check)
      }
      check()
    })
  return {
    pid: child.pid!,
    write: (data) => child.stdin.write(data),
    replies: (count) =>
      until(() => {
        const lines = stdout.split("\n").filter((line) => line.length > 0)
        return lines.length >= count ? lines.slice(0, count).map((line) => JSON.parse(line)) : undefined
      }, () => `${count} replies; stdout: ${stdout}`),
    stderrIncludes: (text) => until(() => stderr.includes(text) ? stderr : undefined, () => `stderr showed ${text}`),
    end: () => (child.stdin.end(), exited),
    exited
  }
}

/** Writes a session file as the file backend would: a header, then one checksummed line per event. */
export const writeSession = (
  dir: string,
  session: string,
  events: ReadonlyArray<{ readonly type: string; readonly data: unknown }>
) => {
  const lines = [new TextDecoder().decode(Format.headerLine(session, 1_700_000_000_000))]
  for (const [seq, event] of events.entries()) {
    lines.push(Format.entryLine(event.type, seq, 1_700_000_000_000 + seq, JSON.stringify(event.data)))
  }
  writeFileSync(join(dir, Format.fileName(session)), lines.join(""))
  return join(dir, Format.fileName(session))
}

/** A `todo/write` event. */
export const write = (...todos: ReadonlyArray<readonly [string, "pending" | "in_progress" | "completed"]>) => ({
  type: "todo/write",
  data: { todos: todos.map(([content, status]) => ({ content, status })) }
})
