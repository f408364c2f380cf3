import { assert, describe, it } from "@effect/vitest"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Layer, Ref, Stream } from "effect"
import { LanguageModel, type Prompt, type Response } from "effect/ai"
import { afterAll, beforeAll } from "vitest"
import * as SessionId from "../src/log/SessionId.ts"
import type { TodoValidationError } from "../src/todo/TodoWriteError.ts"

const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8")
const example = readFileSync(new URL("../scratch/embed.ts", import.meta.url), "utf8")

const usage = { inputTokens: {}, outputTokens: {} }

type Call = { readonly name: string; readonly params: unknown }

/** What the scripted model saw of its previous step's calls: each tool result, by call. */
type Seen = ReadonlyArray<{ readonly name: string; readonly isFailure: boolean; readonly result: unknown }>

/**
 * A scripted model that behaves as the loop lets it: each step reads the tool results of the step
 * before from the prompt it is given, and decides from them. It plans, reads a file, makes a
 * mistake (two items in_progress), and only if it reads the failure does it correct the list.
 */
const plan = ["Read the notes", "Fix the parser", "Run the tests"]
const decide = (step: number, seen: Seen): ReadonlyArray<Call> | string => {
  const todo = (statuses: ReadonlyArray<string>, evidence: Record<number, string> = {}): Call => ({
    name: "todo_write",
    params: {
      todos: plan.map((content, i) => ({ content, status: statuses[i]!, ...(evidence[i] ? { evidence: evidence[i] } : {}) }))
    }
  })
  switch (step) {
    case 0:
      return [todo(["in_progress", "pending", "pending"]), { name: "read_file", params: { path: "NOTES.md" } }]
    case 1: {
      const notes = seen.find((r) => r.name === "read_file")
      if (notes === undefined || notes.isFailure || !String(notes.result).includes("parser")) return "I could not read the notes."
      // the mistake: both remaining steps in_progress under the single-active policy
      return [todo(["completed", "in_progress", "in_progress"], { 0: "read NOTES.md" })]
    }
    case 2:
      // it reads the error it got back and corrects the list
      return seen.some((r) => r.name === "todo_write" && r.isFailure)
        ? [todo(["completed", "in_progress", "pending"], { 0: "read NOTES.md" })]
        : "Nothing to correct."
    case 3:
      return [todo(["completed", "completed", "completed"], { 0: "read NOTES.md", 1: "parser.test.ts passes", 2: "npm test: 12 passed" })]
    default:
      return "Done: the parser is fixed and the tests pass."
  }
}

const scriptedModel = (requests: Ref.Ref<Array<Seen>>) =>
  Layer.effect(
    LanguageModel.LanguageModel,
    LanguageModel.make({
      generateText: (options) =>
        Effect.gen(function*() {
          const prompt: Prompt.Prompt = options.prompt
          const step = prompt.content.filter((message) => message.role === "assistant").length
          // the results of the previous step's calls: the last tool message of the prompt
          const last = prompt.content.at(-1)
          const seen: Seen = last?.role === "tool"
            ? last.content.flatMap((part) =>
              part.type === "tool-result" ? [{ name: part.name, isFailure: part.isFailure, result: part.result }] : []
            )
            : []
          yield* Ref.update(requests, (all) => [...all, seen])
          const next = decide(step, seen)
          const parts: Array<Response.PartEncoded> = typeof next === "string"
            ? [{ type: "text", text: next }, { type: "finish", reason: "stop", usage }]
            : [
              ...next.map((call, i): Response.PartEncoded => ({
                type: "tool-call",
                id: `call-${step}-${i}`,
                name: call.name,
                params: call.params
              })),
              { type: "finish", reason: "tool-calls", usage }
            ]
          return parts
        }),
      streamText: () => Stream.empty
    })
  )

describe("README", () => {
  it("shows the embedding example exactly as scratch/embed.ts, which tsc checks", () => {
    const section = readme.slice(readme.indexOf("## Embedding in an Effect agent loop"))
    const block = section.slice(section.indexOf("```ts\n") + 6, section.indexOf("```\n", section.indexOf("```ts\n") + 6))
    assert.strictEqual(block, example)
  })

  it("starts with npm ci, then npm start; npm test runs the tests", () => {
    const commands = [...readme.matchAll(/^(npm \w+)$/gm)].map((m) => m[1])
    assert.deepStrictEqual(commands.slice(0, 2), ["npm ci", "npm start"])
    assert.include(commands, "npm test")
  })

  describe("the embedding example runs", () => {
    const cwd = process.cwd()
    const dir = mkdtempSync(join(tmpdir(), "todo-write-readme-"))
    beforeAll(() => {
      process.chdir(dir)
      writeFileSync(join(dir, "NOTES.md"), "The parser drops the last token of a line.\n")
    })
    afterAll(() => {
      process.chdir(cwd)
      rmSync(dir, { recursive: true, force: true })
    })

    it.effect("loops: the model plans, uses its own tool, makes a mistake, reads the error and recovers", () =>
      Effect.gen(function*() {
        const { AgentLayer, runTurn } = yield* Effect.promise(() => import("../scratch/embed.ts"))
        const requests = yield* Ref.make<Array<Seen>>([])
        const result = yield* runTurn(SessionId.decodeSync("session-1"), "Fix the parser").pipe(
          Effect.provide([AgentLayer, scriptedModel(requests)])
        )

        // five steps: every tool result went back to the model before its next step
        assert.strictEqual(result.text, "Done: the parser is fixed and the tests pass.")
        // (the calls of one step run concurrently: ordered by call id)
        const results = [...result.toolResults].sort((a, b) => a.id.localeCompare(b.id))
        assert.deepStrictEqual(results.map((r) => [r.name, r.isFailure]), [
          ["todo_write", false],
          ["read_file", false],
          ["todo_write", true],
          ["todo_write", false],
          ["todo_write", false]
        ])
        const error = results[2]!.result as TodoValidationError
        assert.strictEqual(error.violations[0].code, "too_many_in_progress")
        assert.include(error.message, "todos[1] and todos[2] are both in_progress")
        // the model read that failure in the prompt of its next step
        const seen = yield* Ref.get(requests)
        assert.strictEqual(seen.length, 5)
        assert.deepStrictEqual(seen[2]!.map((r) => [r.name, r.isFailure]), [["todo_write", true]])

        assert.deepStrictEqual(result.todos, [
          { content: "Read the notes", status: "completed", evidence: "read NOTES.md" },
          { content: "Fix the parser", status: "completed", evidence: "parser.test.ts passes" },
          { content: "Run the tests", status: "completed", evidence: "npm test: 12 passed" }
        ])
        const lines = readFileSync(join(dir, ".todo-write/sessions/session-1.jsonl"), "utf8").trim().split("\n")
        assert.deepStrictEqual(lines.slice(1).map((line) => JSON.parse(line).type), [
          "turn/start",
          "todo/write",
          "todo/write",
          "todo/write",
          "turn/end"
        ])
      }))
  })
})
