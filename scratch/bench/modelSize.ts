/**
 * 6. Model-facing size: the tokens of the tool definition as a model receives it (name, description,
 * JSON Schema of the parameters) for each policy, and of the one-line success reply, counted with a
 * real o200k tokenizer.
 */
import { encode } from "gpt-tokenizer/encoding/o200k_base"
import * as Todo from "../../src/todo/Todo.ts"
import * as TodoWrite from "../../src/todo/TodoWrite.ts"

export interface Size {
  readonly name: string
  readonly tokens: number
  readonly goal?: { readonly max: number } | undefined
  readonly note?: string | undefined
}

/** The published size of a widely used peer's todo tool description, for scale (not measured here). */
export const peerReference = 2_000

export const run = (): ReadonlyArray<Size> => {
  const definition = (allowParallelInProgress: boolean) =>
    encode(
      JSON.stringify({
        name: TodoWrite.name,
        description: TodoWrite.description({ allowParallelInProgress }),
        parameters: TodoWrite.parametersJsonSchema
      })
    ).length
  const reply = encode(Todo.summary({ pending: 2, in_progress: 1, completed: 3 })).length
  return [
    { name: "tool definition, single-active", tokens: definition(false), goal: { max: 250 } },
    { name: "tool definition, parallel", tokens: definition(true), goal: { max: 250 } },
    { name: "success reply", tokens: reply },
    { name: "peer's todo tool description (published, for scale)", tokens: peerReference, note: "reference, not measured" }
  ]
}
