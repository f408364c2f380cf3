/**
 * What the `todo-write` command prints, exactly. The commands run in-process (`Command.runWith`
 * with a TestConsole), except `serve`, whose promise is about its process's stdout: nothing but
 * JSON-RPC there.
 */
import { NodeServices } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { spawn } from "node:child_process"
import { createInterface } from "node:readline"
import { ConfigProvider, Effect, Exit, FileSystem, Layer, Option, Stream } from "effect"
import { Command } from "effect/cli"
import { TestConsole } from "effect/testing"
import * as Cli from "../../src/cli/Cli.ts"
import * as SessionFile from "../../src/log/file/Format.ts"
import * as SessionLogFile from "../../src/log/file/SessionLogFile.ts"
import * as SessionId from "../../src/log/SessionId.ts"
import * as SessionLog from "../../src/log/SessionLog.ts"
import * as ToolDefinition from "../../src/mcp/ToolDefinition.ts"
import { bin } from "../support/Executables.ts"

/** Runs the command in-process with `args`, an environment of `env` only; answers its exit and output. */
const run = (args: ReadonlyArray<string>, env: Record<string, string> = {}) =>
  Effect.gen(function*() {
    const exit = yield* Effect.exit(Command.runWith(Cli.command, { version: Cli.version })(args))
    const stdout = (yield* TestConsole.logLines).join("\n")
    const stderr = (yield* TestConsole.errorLines).join("\n")
    return { exit, stdout, stderr }
  }).pipe(
    Effect.provide(Layer.mergeAll(
      NodeServices.layer,
      Layer.fresh(TestConsole.layer),
      ConfigProvider.layer(ConfigProvider.fromEnv({ env }))
    ))
  )

/** The message a failed command reports (what the executable prints after `ERROR`). */
const messageOf = (exit: Exit.Exit<unknown, unknown>) => {
  const error = Exit.findErrorOption(exit)
  assert.isTrue(Option.isSome(error), `expected the command to fail, it exited ${exit._tag}`)
  return Option.isSome(error) ? String((error.value as { message?: unknown }).message) : ""
}

const policies = { single: { allowParallelInProgress: false }, parallel: { allowParallelInProgress: true } } as const

/** What `schema --format F` must print, from ToolDefinition itself (not through the command's own mapping). */
const expected = {
  mcp: ToolDefinition.mcp,
  openai: ToolDefinition.openAi,
  "openai-responses": ToolDefinition.openAiResponses,
  anthropic: ToolDefinition.anthropic,
  all: ToolDefinition.all
} as const

const json = (value: unknown) => JSON.parse(JSON.stringify(value))

describe("todo-write outputs", () => {
  describe("schema", () => {
    for (const format of Object.keys(expected) as Array<keyof typeof expected>) {
      it.effect(`--format ${format} prints exactly ToolDefinition's ${format} object, for each policy and for both`, () =>
        Effect.gen(function*() {
          for (const policy of ["single", "parallel"] as const) {
            const out = yield* run(["schema", "--format", format, "--in-progress", policy])
            assert.isTrue(Exit.isSuccess(out.exit), out.stderr)
            assert.deepStrictEqual(
              JSON.parse(out.stdout),
              json(expected[format](policies[policy])),
              `schema --format ${format} --in-progress ${policy} must print ToolDefinition's ${format} object`
            )
          }
          const both = yield* run(["schema", "--format", format])
          assert.deepStrictEqual(JSON.parse(both.stdout), {
            single: json(expected[format](policies.single)),
            parallel: json(expected[format](policies.parallel))
          })
        }))
    }

    it.effect("without --format, prints every format", () =>
      Effect.gen(function*() {
        const out = yield* run(["schema", "--in-progress", "single"])
        assert.deepStrictEqual(JSON.parse(out.stdout), json(ToolDefinition.all(policies.single)))
      }))
  })

  describe("error messages", () => {
    it.effect("show: a missing session, a hostile id, PostgreSQL without DATABASE_URL", () =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const dir = yield* fs.makeTempDirectoryScoped({ prefix: "todo-write-outputs-" })
        const missing = yield* run(["show", "--dir", dir, "nope"])
        assert.match(messageOf(missing.exit), /^no session nope in \//)
        const hostile = yield* run(["show", "--dir", dir, "../etc"])
        assert.match(messageOf(hostile.exit), /^invalid session id "\.\.\/etc": /)
        assert.deepStrictEqual(yield* fs.readDirectory(dir), [], "a hostile id touched nothing")
        const noUrl = yield* run(["show", "--store", "postgres", "s1"])
        assert.match(messageOf(noUrl.exit), /^--store postgres reads the server's URL from DATABASE_URL, which is not set/)
      }).pipe(Effect.provide(NodeServices.layer)))

    it.effect("verify: names the bad session, its line and the count of failures", () =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const dir = yield* fs.makeTempDirectoryScoped({ prefix: "todo-write-outputs-" })
        const good = SessionId.decodeSync("good")
        const bad = SessionId.decodeSync("bad")
        yield* Effect.flatMap(SessionLog.SessionLog, (log) =>
          Effect.all([log.append(good, "turn/start", {}), log.append(bad, "turn/start", {}), log.append(bad, "turn/end", { reason: "completed" })])).pipe(
            Effect.provide(SessionLogFile.layerFileSystem({ directory: dir }).pipe(Layer.provide(NodeServices.layer)))
          )
        const file = `${dir}/${SessionFile.fileName(bad)}`
        yield* fs.writeFileString(file, (yield* fs.readFileString(file)).replace(`"seq":1,`, `"seq":1;`))
        const out = yield* run(["verify", "--dir", dir])
        assert.strictEqual(messageOf(out.exit), "1 of 2 sessions failed verification")
        assert.match(out.stdout, /^bad\s+BAD\s+.*line 3/m)
        assert.match(out.stdout, /^good\s+ok\s+1 event$/m)
      }).pipe(Effect.provide(NodeServices.layer)))

    it.effect("serve: refuses to start without the in_progress policy, saying which flag", () =>
      Effect.gen(function*() {
        const out = yield* run(["serve", "--dir", "unused"])
        assert.isTrue(Exit.isFailure(out.exit))
        assert.include(out.stderr, "Missing required flag: --in-progress")
        assert.notInclude(out.stdout, "jsonrpc")
      }))
  })

  it("serve: every line on stdout is a JSON-RPC message; the banner goes to stderr", async () => {
    const dir = await Effect.runPromise(
      Effect.flatMap(FileSystem.FileSystem, (fs) => fs.makeTempDirectory({ prefix: "todo-write-serve-" })).pipe(
        Effect.provide(NodeServices.layer)
      )
    )
    const child = spawn(process.execPath, [bin, "serve", "--dir", dir, "--session", "rpc", "--in-progress", "single"], {
      stdio: ["pipe", "pipe", "pipe"]
    })
    let stderr = ""
    child.stderr.on("data", (chunk) => (stderr += chunk))
    const lines: Array<string> = []
    const answered = new Map<number, () => void>()
    createInterface({ input: child.stdout }).on("line", (line) => {
      lines.push(line)
      try {
        const id = JSON.parse(line).id
        answered.get(id)?.()
      } catch {
        // not JSON: asserted below
      }
    })
    const request = (id: number, method: string, params: unknown) =>
      new Promise<void>((resolve) => {
        answered.set(id, resolve)
        child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n")
      })
    try {
      await request(1, "initialize", {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "outputs-test", version: "1.0.0" }
      })
      child.stdin.write(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) + "\n")
      await request(2, "tools/list", {})
      await request(3, "tools/call", {
        name: "todo_write",
        arguments: { todos: [{ content: "Plan", status: "in_progress" }] }
      })
      await request(4, "tools/call", { name: "todo_write", arguments: { todos: "not a list" } })
    } finally {
      child.kill("SIGTERM")
      await new Promise((resolve) => child.on("exit", resolve))
      await Effect.runPromise(
        Effect.flatMap(FileSystem.FileSystem, (fs) => fs.remove(dir, { recursive: true })).pipe(Effect.provide(NodeServices.layer))
      )
    }
    assert.isAtLeast(lines.length, 4)
    for (const line of lines) {
      let message: { jsonrpc?: unknown; id?: unknown; method?: unknown }
      try {
        message = JSON.parse(line)
      } catch {
        assert.fail(`serve printed a line on stdout that is not JSON-RPC: ${JSON.stringify(line)}`)
      }
      assert.strictEqual(message.jsonrpc, "2.0", `not a JSON-RPC message: ${line}`)
      assert.isTrue("id" in message || "method" in message, `not a JSON-RPC message: ${line}`)
    }
    assert.include(stderr, "todo-write: serving todo_write over stdio; session rpc")
  }, 30_000)

  it.effect("show --json prints the session's list as JSON, and nothing on stderr", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const dir = yield* fs.makeTempDirectoryScoped({ prefix: "todo-write-outputs-" })
      const s = SessionId.decodeSync("shown")
      yield* Effect.flatMap(SessionLog.SessionLog, (log) =>
        Effect.andThen(
          log.append(s, "todo/write", { todos: [{ content: "a", status: "in_progress" }] }),
          Stream.runCollect(log.read(s))
        )).pipe(Effect.provide(SessionLogFile.layerFileSystem({ directory: dir }).pipe(Layer.provide(NodeServices.layer))))
      const out = yield* run(["show", "--dir", dir, "--json", "shown"])
      assert.deepStrictEqual(JSON.parse(out.stdout), { session: "shown", events: 1, todos: [{ content: "a", status: "in_progress" }] })
      assert.strictEqual(out.stderr, "")
    }).pipe(Effect.provide(NodeServices.layer)))
})
