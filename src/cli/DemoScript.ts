/**
 * A scripted agent that shows what `todo_write` does: a fake `LanguageModel` (no network) works
 * through a small task in two turns. It plans three steps, completes them one by one, makes one
 * invalid call (two items in_progress under the single-active policy), reads the error it gets back
 * and recovers. Each step prints what the model said, what the tool answered, and the checklist.
 */
import * as LanguageModel from "effect/ai/LanguageModel"
import * as Prompt from "effect/ai/Prompt"
import type * as Response from "effect/ai/Response"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import type * as SessionId from "../log/SessionId.ts"
import { ProjectionStore } from "../projection/ProjectionStore.ts"
import * as AgentSession from "../todo/AgentSession.ts"
import * as Checklist from "../todo/Checklist.ts"
import type * as Todo from "../todo/Todo.ts"
import * as TodoProjection from "../todo/TodoProjection.ts"
import * as TodoWrite from "../todo/TodoWrite.ts"

interface Step {
  /** What the model says. */
  readonly say: string
  /** The list it sends to todo_write, if it calls the tool in this step. */
  readonly todos?: ReadonlyArray<{ readonly content: string; readonly status: Todo.Status }>
}

interface Turn {
  readonly prompt: string
  readonly steps: ReadonlyArray<Step>
}

const plan = ["Read the config loader", "Add the --verbose flag", "Document the flag in the README"]

export const script: ReadonlyArray<Turn> = [
  {
    prompt: "Add a --verbose flag to the CLI.",
    steps: [
      {
        say: "Three steps; starting with the config loader.",
        todos: [
          { content: plan[0]!, status: "in_progress" },
          { content: plan[1]!, status: "pending" },
          { content: plan[2]!, status: "pending" }
        ]
      },
      {
        say: "Loader read. I'll add the flag and write the docs at the same time.",
        todos: [
          { content: plan[0]!, status: "completed" },
          { content: plan[1]!, status: "in_progress" },
          { content: plan[2]!, status: "in_progress" }
        ]
      },
      {
        say: "Only one step may be in progress here: the flag first, the docs after.",
        todos: [
          { content: plan[0]!, status: "completed" },
          { content: plan[1]!, status: "in_progress" },
          { content: plan[2]!, status: "pending" }
        ]
      },
      { say: "The flag is half done; pausing here for your review." }
    ]
  },
  {
    prompt: "Looks good, finish it.",
    steps: [
      {
        say: "New turn, new plan for what is left.",
        todos: [{ content: plan[1]!, status: "in_progress" }, { content: plan[2]!, status: "pending" }]
      },
      {
        say: "Flag done; documenting it.",
        todos: [{ content: plan[1]!, status: "completed" }, { content: plan[2]!, status: "in_progress" }]
      },
      {
        say: "Documented.",
        todos: [{ content: plan[1]!, status: "completed" }, { content: plan[2]!, status: "completed" }]
      },
      { say: "All done: --verbose is in and documented." }
    ]
  }
]

const usage = { inputTokens: {}, outputTokens: {} }

/** A `LanguageModel` that answers each request with the script's next step, across turns. */
export const scriptedModel = (turns: ReadonlyArray<Turn>): Layer.Layer<LanguageModel.LanguageModel> =>
  Layer.effect(
    LanguageModel.LanguageModel,
    Effect.gen(function*() {
      const steps = turns.flatMap((turn) => turn.steps)
      const next = yield* Ref.make(0)
      return yield* LanguageModel.make({
        generateText: () =>
          Effect.map(Ref.getAndUpdate(next, (n) => n + 1), (i): Array<Response.PartEncoded> => {
            const step = steps[i] ?? { say: "(the script has ended)" }
            return step.todos === undefined
              ? [{ type: "text", text: step.say }, { type: "finish", reason: "stop", usage }]
              : [
                { type: "text", text: step.say },
                { type: "tool-call", id: `call-${i}`, name: TodoWrite.name, params: { todos: step.todos } },
                { type: "finish", reason: "tool-calls", usage }
              ]
          }),
        streamText: () => Stream.empty
      })
    })
  )

const indent = (text: string) => text.split("\n").map((line) => `    ${line}`).join("\n")

/** Runs the script as an agent loop over the session, printing each step. */
export const run = (session: SessionId.SessionId, turns: ReadonlyArray<Turn> = script) =>
  Effect.gen(function*() {
    const toolkit = yield* TodoWrite.toolkitFromPolicy
    const store = yield* ProjectionStore
    for (const [index, turn] of turns.entries()) {
      yield* Console.log(`\n== Turn ${index + 1} == user: ${turn.prompt}`)
      yield* Effect.gen(function*() {
        let prompt = Prompt.make(turn.prompt)
        for (let step = 0; step < turn.steps.length; step++) {
          const response = yield* LanguageModel.generateText({ prompt, toolkit })
          yield* Console.log(`\nmodel: ${response.text}`)
          for (const result of response.toolResults) {
            // The encoded result is the text the model reads: the line of counts or the error's text.
            const text = typeof result.encodedResult === "string"
              ? result.encodedResult
              : JSON.stringify(result.encodedResult)
            if (result.isFailure) {
              yield* Console.log(`  todo_write -> error, returned to the model:\n${indent(text)}`)
            } else {
              yield* Console.log(`  todo_write -> ${text}`)
              yield* Console.log(indent(Checklist.render(yield* store.get(TodoProjection.todos, session))))
            }
          }
          prompt = Prompt.concat(prompt, Prompt.fromResponseParts(response.content))
          if (response.finishReason !== "tool-calls") break
        }
      }).pipe(AgentSession.turn(session))
    }
  }).pipe(Effect.provide(scriptedModel(turns)))
