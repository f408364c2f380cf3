/**
 * 6. Model-facing size: the tokens of the tool definition as a model receives it (name, description,
 * JSON Schema of the parameters) for each policy, and of the replies the model reads, per path,
 * counted with a real o200k tokenizer. Over MCP the model reads the text; through the Effect AI
 * providers (@effect/ai-openai, @effect/ai-anthropic) it reads `JSON.stringify` of the tool's
 * encoded result, which is the same text as a JSON string (test/todo/Providers.test.ts checks that
 * on the providers' own code). The encoded object those providers sent before the result became
 * text is measured for contrast.
 */
import { Effect, Result, Schema } from "effect"
import { encode } from "gpt-tokenizer/encoding/o200k_base"
import * as Todo from "../../src/todo/Todo.ts"
import * as TodoPolicy from "../../src/todo/TodoPolicy.ts"
import * as TodoValidation from "../../src/todo/TodoValidation.ts"
import * as TodoWrite from "../../src/todo/TodoWrite.ts"
import { TodoWriteError } from "../../src/todo/TodoWriteError.ts"

export interface Size {
  readonly name: string
  readonly tokens: number
  readonly goal?: { readonly max: number } | undefined
  readonly note?: string | undefined
}

/** The published size of a widely used peer's todo tool description, for scale (not measured here). */
export const peerReference = 2_000

const tokens = (text: string) => encode(text).length

export const run = (): ReadonlyArray<Size> => {
  const definition = (allowParallelInProgress: boolean) =>
    tokens(
      JSON.stringify({
        name: TodoWrite.name,
        description: TodoWrite.description({ allowParallelInProgress }),
        parameters: TodoWrite.parametersJsonSchema
      })
    )
  const success = { todos: [], counts: { pending: 2, in_progress: 1, completed: 3 } }
  // A two-problem rejection: an unknown status and two items in_progress.
  const rejected = TodoValidation.validate(Effect.runSync(TodoPolicy.make({ allowParallelInProgress: false })), {
    todos: [{ content: "Read", status: "done" }, { content: "Write", status: "in_progress" }, {
      content: "Test",
      status: "in_progress"
    }]
  })
  if (Result.isSuccess(rejected)) throw new Error("the rejection sample was accepted")
  const successText = Schema.encodeSync(TodoWrite.SuccessText)(success)
  const failureText = Schema.encodeSync(TodoWrite.FailureText)(rejected.failure)
  const failureObject = JSON.stringify(Schema.encodeSync(TodoWriteError)(rejected.failure))
  const providers = "Effect AI providers (JSON string)"
  return [
    { name: "tool definition, single-active", tokens: definition(false), goal: { max: 250 } },
    { name: "tool definition, parallel", tokens: definition(true), goal: { max: 250 } },
    { name: "success reply, MCP (text)", tokens: tokens(Todo.summary(success.counts)) },
    { name: `success reply, ${providers}`, tokens: tokens(JSON.stringify(successText)) },
    { name: "2-problem rejection, MCP (text)", tokens: tokens(failureText) },
    { name: `2-problem rejection, ${providers}`, tokens: tokens(JSON.stringify(failureText)) },
    {
      name: "2-problem rejection as the encoded error object",
      tokens: tokens(failureObject),
      note: "what the providers sent before; contrast"
    },
    { name: "peer's todo tool description (published, for scale)", tokens: peerReference, note: "reference, not measured" }
  ]
}
