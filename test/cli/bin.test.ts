/**
 * The `todo-write` executable as a user runs it: real processes, and for `serve` the official MCP
 * SDK client over stdio, and the demo `npm start` runs. What the inspection commands print is checked
 * in this process (`inProcess`, as `Main.ts` runs them); the exit codes a script sees from real
 * processes are checked in Show.test.ts and Verify.test.ts.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { assert, describe, it } from "@effect/vitest"
import { appendFileSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import * as SessionFile from "../../src/log/file/Format.ts"
import * as ToolDefinition from "../../src/mcp/ToolDefinition.ts"
import * as PgTest from "../log/sql/PgTest.ts"
import { bin, cli, inProcess, tempDirectory, write, writeSession } from "./CliTest.ts"

const connect = async (
  dir: string,
  session: string,
  inProgress: "single" | "parallel",
  options: { readonly store?: "file" | "postgres"; readonly env?: Record<string, string> } = {}
) => {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [bin, "serve", "--dir", dir, "--session", session, "--in-progress", inProgress, "--store", options.store ?? "file"],
    env: { ...process.env, ...options.env } as Record<string, string>,
    stderr: "pipe"
  })
  const client = new Client({ name: "sdk-test", version: "1.0.0" })
  await client.connect(transport)
  return client
}

type ToolResult = { isError?: boolean; content: Array<{ type: string; text?: string }>; structuredContent?: unknown }

describe("todo-write serve (MCP over stdio, official SDK client)", () => {
  it("lists, calls, rejects and continues the same log after a restart", async () => {
    const dir = tempDirectory()
    const client = await connect(dir, "mcp-e2e", "single")
    try {
      const { tools } = await client.listTools()
      const tool = tools.find((t) => t.name === "todo_write")
      assert.isDefined(tool)
      assert.include(tool!.description, "at most one todo in_progress")
      assert.strictEqual(tool!.inputSchema.additionalProperties, false)
      assert.strictEqual((tool!.inputSchema.properties!.todos as any).items.additionalProperties, false)

      const ok = await client.callTool({
        name: "todo_write",
        arguments: { todos: [{ content: " Plan ", status: "in_progress" }, { content: "Build", status: "pending" }] }
      }) as ToolResult
      assert.notStrictEqual(ok.isError, true)
      assert.strictEqual(ok.content[0]!.text, "Updated todo list: 1 pending, 1 in progress, 0 completed.")
      assert.deepStrictEqual((ok.structuredContent as any).todos[0], { content: "Plan", status: "in_progress" })

      const invalid = await client.callTool({
        name: "todo_write",
        arguments: { todos: [{ content: "Plan", status: "in_progress" }, { content: "Build", status: "in_progress" }] }
      }) as ToolResult
      assert.isTrue(invalid.isError)
      assert.include(invalid.content[0]!.text, "(too_many_in_progress)")

      const excess = await client.callTool({
        name: "todo_write",
        arguments: { todos: [{ content: "Plan", status: "pending", priority: 1 }], merge: true }
      }) as ToolResult
      assert.isTrue(excess.isError)
      assert.include(excess.content[0]!.text, "todos[0].priority")
      assert.include(excess.content[0]!.text, "merge")

      const wrongType = await client.callTool({ name: "todo_write", arguments: { todos: "Plan" } }) as ToolResult
      assert.isTrue(wrongType.isError)
      assert.include(wrongType.content[0]!.text, "(invalid_type)")
    } finally {
      await client.close()
    }

    const restarted = await connect(dir, "mcp-e2e", "single")
    try {
      const next = await restarted.callTool({
        name: "todo_write",
        arguments: { todos: [{ content: "Plan", status: "completed" }, { content: "Build", status: "in_progress" }] }
      }) as ToolResult
      assert.notStrictEqual(next.isError, true)
    } finally {
      await restarted.close()
    }
    const lines = readFileSync(join(dir, "mcp-e2e.jsonl"), "utf8").trim().split("\n")
    assert.deepStrictEqual(lines.slice(1).map((line) => JSON.parse(line).seq), [0, 1])
    const shown = await inProcess(["show", "--dir", dir, "--json", "mcp-e2e"])
    assert.deepStrictEqual(JSON.parse(shown.stdout).todos, [
      { content: "Plan", status: "completed" },
      { content: "Build", status: "in_progress" }
    ])
  }, 60_000)

  it.skipIf(PgTest.skipReason !== undefined)("--store postgres writes to PostgreSQL at $DATABASE_URL", async () => {
    const session = `cli-pg-${process.pid}-${Date.now()}`
    const env = { DATABASE_URL: PgTest.url }
    const client = await connect(tempDirectory(), session, "single", { store: "postgres", env })
    try {
      const ok = await client.callTool({
        name: "todo_write",
        arguments: { todos: [{ content: "In the database", status: "in_progress" }] }
      }) as ToolResult
      assert.notStrictEqual(ok.isError, true, ok.content[0]?.text)
    } finally {
      await client.close()
    }
    const shown = await inProcess(["show", "--store", "postgres", "--json", session], { env })
    assert.strictEqual(shown.code, 0, shown.stderr)
    assert.deepStrictEqual(JSON.parse(shown.stdout).todos, [{ content: "In the database", status: "in_progress" }])
    const missing = await inProcess(["show", "--store", "postgres", session], { env: { DATABASE_URL: "" } })
    assert.notStrictEqual(missing.code, 0)
  }, 60_000)

  // Refusing to start without the in_progress policy, with nothing on stdout: Serve.test.ts.
})

/**
 * A small session of two writes, for the inspection commands, in the file format the backend writes
 * (the first test above reads a session the real server wrote).
 */
const seed = () => {
  const dir = tempDirectory()
  writeSession(dir, "s1", [write(["a", "in_progress"]), write(["a", "completed"], ["b", "in_progress"])])
  return dir
}

describe("todo-write show / verify / schema / demo", () => {
  it("show prints the checklist, the history of writes, and JSON", async () => {
    const dir = seed()
    const plain = await inProcess(["show", "--dir", dir, "s1"])
    assert.strictEqual(plain.code, 0, plain.stderr)
    assert.include(plain.stdout, "[x] a")
    assert.include(plain.stdout, "[>] b")
    assert.include(plain.stdout, "1/2 completed")
    const history = await inProcess(["show", "--dir", dir, "--history", "writes", "s1"])
    assert.strictEqual(history.stdout.match(/-- Write at seq/g)?.length, 2)
    const json = JSON.parse((await inProcess(["show", "--dir", dir, "--json", "--history", "writes", "s1"])).stdout)
    assert.strictEqual(json.history.length, 2)
    assert.deepStrictEqual(json.history[0].todos, [{ content: "a", status: "in_progress" }])
    const missing = await inProcess(["show", "--dir", dir, "nope"])
    assert.notStrictEqual(missing.code, 0)
    const hostile = await inProcess(["show", "--dir", dir, "../etc"])
    assert.notStrictEqual(hostile.code, 0)
    assert.include(hostile.error, "invalid session id")
  }, 60_000)

  it("show prints evidence under completed items, and escapes what could spoof the checklist", async () => {
    const dir = tempDirectory()
    // written as an older version or another writer could have: the durable invariant accepts it
    const todos = [
      { content: "Run the tests", status: "completed", evidence: "npm test: 12 passed" },
      { content: "step\n[x] FAKE DONE ITEM", status: "pending" },
      { content: "\u001b[31mred", status: "pending" }
    ]
    writeFileSync(
      join(dir, SessionFile.fileName("spoof")),
      Buffer.concat([
        SessionFile.headerLine("spoof", 0),
        SessionFile.encodeLines(SessionFile.entryLine("todo/write", 0, 1, JSON.stringify({ todos })))
      ])
    )
    const shown = await inProcess(["show", "--dir", dir, "spoof"])
    assert.strictEqual(shown.code, 0, shown.stderr)
    assert.include(shown.stdout, "[x] Run the tests\n    evidence: npm test: 12 passed\n")
    assert.deepStrictEqual(shown.stdout.split("\n").filter((line) => line.startsWith("[x]")), ["[x] Run the tests"])
    assert.notInclude(shown.stdout, "\u001b")
  }, 30_000)

  it("verify reports ok, repairs a torn tail, and fails on a corrupted middle line", async () => {
    const dir = seed()
    const good = await inProcess(["verify", "--dir", dir])
    assert.strictEqual(good.code, 0, good.stderr)
    assert.match(good.stdout, /s1\s+ok\s+2 events/)

    const file = join(dir, "s1.jsonl")
    const whole = readFileSync(file, "utf8")
    appendFileSync(file, `{"type":"todo/write","seq":2,"ti`)
    const torn = await inProcess(["verify", "--dir", dir, "s1"])
    assert.strictEqual(torn.code, 0, torn.stderr)
    assert.match(torn.stdout, /s1\s+repaired/)
    assert.strictEqual(readFileSync(file, "utf8"), whole)

    const lines = whole.split("\n")
    lines[1] = lines[1]!.replace(`"seq":0`, `"seq":0,,`)
    writeFileSync(file, lines.join("\n"))
    const bad = await inProcess(["verify", "--dir", dir])
    assert.strictEqual(bad.code, 1)
    assert.match(bad.stdout, /s1\s+BAD.*line 2/)

    // a well-formed line that breaks the durable invariant (untrimmed content), checksummed anew
    const invalid = whole.split("\n")
    const { crc: _, ...event } = JSON.parse(invalid[2]!)
    event.data.todos[0].content = " a"
    invalid[2] = SessionFile.seal(JSON.stringify(event)).trimEnd()
    writeFileSync(file, invalid.join("\n"))
    const broken = await inProcess(["verify", "--dir", dir, "s1"])
    assert.strictEqual(broken.code, 1)
    assert.match(broken.stdout, /s1\s+BAD.*line 3: invariant "todo\/write shape" violated at seq 1/)

    const missing = await inProcess(["verify", "--dir", dir, "nope"])
    assert.strictEqual(missing.code, 1)
    assert.match(missing.stdout, /nope\s+MISSING/)
  }, 60_000)

  it("schema prints the definition as MCP, OpenAI and Anthropic tool objects", async () => {
    const all = await inProcess(["schema"])
    assert.strictEqual(all.code, 0, all.stderr)
    const both = JSON.parse(all.stdout)
    assert.strictEqual(both.single.mcp.name, "todo_write")
    assert.strictEqual(both.single.openai.function.parameters.additionalProperties, false)
    assert.strictEqual(both.parallel.anthropic.input_schema.properties.todos.items.additionalProperties, false)
    assert.notStrictEqual(both.single.mcp.description, both.parallel.mcp.description)
    const one = JSON.parse((await inProcess(["schema", "--in-progress", "parallel", "--format", "anthropic"])).stdout)
    assert.include(one.description, "parallel")
    assert.include(one.description, "may cite evidence")
    const required = JSON.parse(
      (await inProcess(["schema", "--in-progress", "single", "--evidence", "require", "--format", "openai"])).stdout
    )
    assert.include(required.function.description, "must cite evidence")
    assert.deepStrictEqual(required.function.parameters.properties.todos.items.required, ["content", "status", "evidence"])
  }, 30_000)

  it("schema --format openai-responses is the flat Responses API tool; openai is the Chat Completions one", async () => {
    const policy = { allowParallelInProgress: false }
    const responses = await inProcess(["schema", "--in-progress", "single", "--format", "openai-responses"])
    assert.strictEqual(responses.code, 0, responses.stderr)
    // test/todo/Providers.test.ts checks that @effect/ai-openai sends exactly this object
    assert.deepStrictEqual(JSON.parse(responses.stdout), ToolDefinition.openAiResponses(policy))
    const chat = JSON.parse((await inProcess(["schema", "--in-progress", "single", "--format", "openai"])).stdout)
    assert.deepStrictEqual(chat, {
      type: "function",
      function: {
        name: "todo_write",
        description: ToolDefinition.openAiResponses(policy).description,
        parameters: ToolDefinition.openAiResponses(policy).parameters,
        strict: true
      }
    })
  }, 30_000)

  it("demo runs the scripted agent to the end and replays its log", async () => {
    const dir = tempDirectory()
    const result = await cli(["demo", "--dir", dir])
    assert.strictEqual(result.code, 0, result.stderr)
    assert.include(result.stdout, "(too_many_in_progress)")
    assert.include(result.stdout, "Turn 2 ended (completed)")
    assert.include(result.stdout, "2/2 completed")
    assert.strictEqual((await inProcess(["verify", "--dir", dir])).code, 0)
  }, 30_000)
})
