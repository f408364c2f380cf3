import { Effect, FileSystem, Layer, Schema } from "effect"
import { LanguageModel, Prompt, Tool, Toolkit } from "effect/ai"
import { NodeServices } from "@effect/platform-node"
import {
  AgentSession,
  ProjectionStore,
  SessionId,
  TodoEvents,
  TodoPolicy,
  TodoProjection,
  TodoWrite
} from "effect-todo-write"
import { SessionLogFile } from "effect-todo-write/file"

// Your agent's own tools: here, one that reads a file for the model.
export const AgentTools = Toolkit.make(
  Tool.make("read_file", {
    description: "Read a text file of the project",
    parameters: Schema.Struct({ path: Schema.String }),
    success: Schema.String,
    failure: Schema.String,
    failureMode: "return"
  })
)

const AgentToolsLayer = AgentTools.toLayer(Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  return { read_file: ({ path }) => Effect.mapError(fs.readFileString(path), (error) => error.message) }
}))

// The session log (JSONL files, checked by the todo invariants), the deployment's policy, the
// handlers of todo_write and of your tools, and the projection store, as one layer.
export const AgentLayer = Layer.mergeAll(TodoWrite.layer, AgentToolsLayer, ProjectionStore.layer).pipe(
  Layer.provideMerge(Layer.mergeAll(
    TodoEvents.layerChecked.pipe(Layer.provide(SessionLogFile.layerFileSystem({ directory: ".todo-write/sessions" }))),
    TodoPolicy.layer({ allowParallelInProgress: false })
  )),
  Layer.provideMerge(NodeServices.layer)
)

// One turn of your agent loop. Each `generateText` is one step: the model calls tools, the
// toolkit runs them, and their results (todo_write's errors included) go back into the prompt for
// the next step, until the model answers without calling a tool.
export const runTurn = (session: SessionId.SessionId, userPrompt: string, maxSteps = 25) =>
  Effect.gen(function*() {
    const toolkit = Toolkit.merge(yield* TodoWrite.toolkitFromPolicy, AgentTools)
    let prompt = Prompt.make(userPrompt)
    let response = yield* LanguageModel.generateText({ prompt, toolkit })
    const toolResults = [...response.toolResults]
    for (let step = 1; response.finishReason === "tool-calls" && step < maxSteps; step++) {
      prompt = Prompt.concat(prompt, Prompt.fromResponseParts(response.content))
      response = yield* LanguageModel.generateText({ prompt, toolkit })
      toolResults.push(...response.toolResults)
    }
    const store = yield* ProjectionStore.ProjectionStore
    return { text: response.text, toolResults, todos: yield* store.get(TodoProjection.todos, session) }
  }).pipe(AgentSession.turn(session))

// Provide `AgentLayer` and your provider's `LanguageModel` (e.g. from @effect/ai-openai):
// runTurn(SessionId.decodeSync("session-1"), "Refactor the parser").pipe(Effect.provide([AgentLayer, Model]))
