import { assert, describe, it } from "@effect/vitest"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Layer, Stream } from "effect"
import { LanguageModel } from "effect/ai"
import { afterAll, beforeAll } from "vitest"
import * as SessionId from "../src/log/SessionId.ts"

const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8")
const example = readFileSync(new URL("../scratch/embed.ts", import.meta.url), "utf8")

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
    beforeAll(() => process.chdir(dir))
    afterAll(() => {
      process.chdir(cwd)
      rmSync(dir, { recursive: true, force: true })
    })

    it.effect("one turn with a model that calls todo_write", () =>
      Effect.gen(function*() {
        const { TodoLayer, oneTurn } = yield* Effect.promise(() => import("../scratch/embed.ts"))
        const usage = { inputTokens: {}, outputTokens: {} }
        const Model = Layer.effect(
          LanguageModel.LanguageModel,
          LanguageModel.make({
            generateText: () =>
              Effect.succeed([
                { type: "text", text: "Planned." },
                {
                  type: "tool-call",
                  id: "c1",
                  name: "todo_write",
                  params: { todos: [{ content: "Read the parser", status: "in_progress" }] }
                },
                { type: "finish", reason: "tool-calls", usage }
              ] as any),
            streamText: () => Stream.empty
          })
        )
        const result = yield* oneTurn(SessionId.decodeSync("session-1"), "Refactor the parser").pipe(
          Effect.provide([TodoLayer, Model])
        )
        assert.deepStrictEqual(result.todos, [{ content: "Read the parser", status: "in_progress" }])
        const lines = readFileSync(join(dir, ".todo-write/sessions/session-1.jsonl"), "utf8").trim().split("\n")
        assert.deepStrictEqual(lines.slice(1).map((line) => JSON.parse(line).type), ["turn/start", "todo/write", "turn/end"])
      }))
  })
})
