/**
 * `todo_write` through the real Effect AI providers, unpatched (`@effect/ai-openai` and
 * `@effect/ai-anthropic`), against a local fake of their HTTP APIs: the tool definition that goes
 * out, the arguments that come in, and the text of each tool result that goes back to the model.
 * The providers load on effect 4.1 through test/support/providerShim (see there).
 */
import { AnthropicClient, AnthropicLanguageModel } from "@effect/ai-anthropic"
import { OpenAiClient, OpenAiLanguageModel } from "@effect/ai-openai"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import { LanguageModel, Prompt } from "effect/ai"
import { FetchHttpClient } from "effect/http"
import * as SessionId from "../../src/log/SessionId.ts"
import * as SessionLog from "../../src/log/SessionLog.ts"
import * as ToolDefinition from "../../src/mcp/ToolDefinition.ts"
import * as ProjectionStore from "../../src/projection/ProjectionStore.ts"
import * as AgentSession from "../../src/todo/AgentSession.ts"
import * as TodoEvents from "../../src/todo/TodoEvents.ts"
import * as TodoPolicy from "../../src/todo/TodoPolicy.ts"
import * as TodoProjection from "../../src/todo/TodoProjection.ts"
import * as TodoWrite from "../../src/todo/TodoWrite.ts"
import { modelText, TodoValidationError } from "../../src/todo/TodoWriteError.ts"
import { readAll } from "../log/SessionLogConformance.ts"
import * as FakeModelApi from "../support/FakeModelApi.ts"

const policy = { allowParallelInProgress: false }
const session = SessionId.decodeSync("provider-session")

const env = TodoWrite.layer.pipe(
  Layer.merge(ProjectionStore.layer),
  Layer.provideMerge(Layer.mergeAll(
    TodoEvents.layerChecked.pipe(Layer.provideMerge(SessionLog.layerMemory)),
    TodoPolicy.layer(policy)
  ))
)

// What each provider puts on the wire, and where a request carries the tool results sent back.
const providers = {
  openai: {
    model: (url: string) =>
      OpenAiLanguageModel.layer({ model: "gpt-4.1" }).pipe(
        Layer.provide(OpenAiClient.layer({ apiKey: Redacted.make("sk-test"), apiUrl: `${url}/v1` }))
      ),
    tool: ToolDefinition.openAiResponses(policy),
    sentBack: (body: any): Array<unknown> =>
      body.input.filter((item: any) => item.type === "function_call_output").map((item: any) => item.output),
    // The Responses API has no error flag on a function call's output.
    errorFlags: (_body: any): ReadonlyArray<unknown> => [],
    expectedFlags: []
  },
  anthropic: {
    model: (url: string) =>
      AnthropicLanguageModel.layer({ model: "claude-sonnet-4-5" }).pipe(
        Layer.provide(AnthropicClient.layer({ apiKey: Redacted.make("sk-ant-test"), apiUrl: url }))
      ),
    tool: { ...ToolDefinition.anthropic(policy), strict: true },
    sentBack: (body: any): Array<unknown> =>
      body.messages.flatMap((message: any) => Array.isArray(message.content) ? message.content : [])
        .filter((part: any) => part.type === "tool_result")
        .map((part: any) => part.content),
    errorFlags: (body: any): ReadonlyArray<unknown> =>
      body.messages.flatMap((message: any) => Array.isArray(message.content) ? message.content : [])
        .filter((part: any) => part.type === "tool_result")
        .map((part: any) => part.is_error),
    expectedFlags: [false, true, false]
  }
}

// A plan, a rejected call (an unknown status, which a Todo.Write parameter schema would fail the whole
// generateText on, and excess keys, which it would strip), a correction, a final answer.
const plan = { todos: [{ content: "Read the parser", status: "in_progress" }, { content: "Fix the bug", status: "pending" }] }
const rejected = {
  todos: [{ content: "Read the parser", status: "done", note: "read" }, { content: "Fix the bug", status: "in_progress" }],
  priority: 1
}
const correction = {
  todos: [{ content: "Read the parser", status: "completed" }, { content: "Fix the bug", status: "in_progress" }]
} as const
const script: ReadonlyArray<FakeModelApi.Step> = [{ call: plan }, { call: rejected }, { call: correction }, {
  text: "The bug is being fixed."
}]

// The agent loop: one generateText per model step, each tool result fed back, until the model answers.
const agentLoop = Effect.gen(function*() {
  const toolkit = yield* TodoWrite.toolkitFromPolicy
  let prompt = Prompt.make("Fix the parser bug.")
  const results = []
  for (let step = 0; step < 10; step++) {
    const response = yield* LanguageModel.generateText({ prompt, toolkit })
    results.push(...response.toolResults)
    prompt = Prompt.concat(prompt, Prompt.fromResponseParts(response.content))
    if (response.finishReason !== "tool-calls") return { results, answer: response.text }
  }
  return assert.fail("the loop did not end")
}).pipe(AgentSession.turn(session))

describe("todo_write through the real providers", () => {
  it("the providers are typed on effect 4.1 (tsconfig.json's paths), not any", () => {
    // each directive is unused, a tsc error, if the providers' types turned into `any`
    // @ts-expect-error the OpenAI model layer provides a LanguageModel, not a string
    const openAi: Layer.Success<ReturnType<typeof OpenAiLanguageModel.layer>> = "not a LanguageModel"
    // @ts-expect-error the Anthropic model layer provides a LanguageModel, not a string
    const anthropic: Layer.Success<ReturnType<typeof AnthropicLanguageModel.layer>> = "not a LanguageModel"
    assert.deepStrictEqual([openAi, anthropic], ["not a LanguageModel", "not a LanguageModel"])
  })

  for (const [name, provider] of Object.entries(providers)) {
    it.live(`${name}: closed strict definition out, raw arguments in, text back, typed values for the program`, () =>
      Effect.gen(function*() {
        const api = yield* FakeModelApi.serve(script)
        const { results, answer } = yield* agentLoop.pipe(
          Effect.provide(provider.model(api.url).pipe(Layer.provide(FetchHttpClient.layer)))
        )
        assert.strictEqual(answer, "The bug is being fixed.")

        // out: every request carried the definition `todo-write schema` prints, and it passed strict mode
        assert.deepStrictEqual(api.refusals, [])
        assert.strictEqual(api.requests.length, 4)
        for (const body of api.requests) assert.deepStrictEqual(body.tools, [provider.tool])

        // the program gets typed values: the list and counts, or the error with every violation
        assert.deepStrictEqual(results.map((r) => r.isFailure), [false, true, false])
        assert.deepStrictEqual(results[2]!.result, {
          todos: correction.todos,
          counts: { pending: 0, in_progress: 1, completed: 1 }
        })
        const error = results[1]!.result
        assert.isTrue(error instanceof TodoValidationError)
        if (!(error instanceof TodoValidationError)) return
        const found = error.violations.map((v) => `${v.code} ${v.path.join(".")}`).sort()
        assert.deepStrictEqual(found, [
          "excess_property priority",
          "excess_property todos.0.note",
          "invalid_status todos.0.status"
        ])

        // back: the model reads the line and the message (as JSON strings: the providers send
        // JSON.stringify of the encoded result), never an encoded object
        assert.deepStrictEqual(provider.sentBack(api.requests[3]), [
          JSON.stringify("Updated todo list: 1 pending, 1 in progress, 0 completed."),
          JSON.stringify(modelText(error)),
          JSON.stringify("Updated todo list: 0 pending, 1 in progress, 1 completed.")
        ])
        assert.match(modelText(error), /^todo_write rejected the list and saved nothing/)
        assert.deepStrictEqual(provider.errorFlags(api.requests[3]), provider.expectedFlags)

        // the log holds the two accepted lists, exactly; the projection is the correction
        const entries = yield* readAll(yield* SessionLog.SessionLog, session)
        assert.deepStrictEqual(entries.map((e) => e.type), ["turn/start", "todo/write", "todo/write", "turn/end"])
        assert.deepStrictEqual(entries.slice(1, 3).map((e) => e.data), [plan, correction])
        const store = yield* ProjectionStore.ProjectionStore
        assert.deepStrictEqual(yield* store.get(TodoProjection.todos, session), correction.todos)
      }).pipe(Effect.provide(env)))
  }
})
