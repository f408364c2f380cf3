import { Effect, Layer } from "effect"
import { LanguageModel } from "effect/ai"
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

// The session log (JSONL files, checked by the todo invariants), the deployment's policy, the
// tool's handler and the projection store, as one layer.
export const TodoLayer = Layer.mergeAll(TodoWrite.layer, ProjectionStore.layer).pipe(
  Layer.provideMerge(Layer.mergeAll(
    TodoEvents.layerChecked.pipe(
      Layer.provide(SessionLogFile.layerFileSystem({ directory: ".todo-write/sessions" })),
      Layer.provide(NodeServices.layer)
    ),
    TodoPolicy.layer({ allowParallelInProgress: false })
  ))
)

// One turn of your agent loop: the model calls todo_write as often as it likes.
export const oneTurn = (session: SessionId.SessionId, prompt: string) =>
  Effect.gen(function*() {
    const toolkit = yield* TodoWrite.toolkitFromPolicy
    const response = yield* LanguageModel.generateText({ prompt, toolkit })
    const store = yield* ProjectionStore.ProjectionStore
    return { text: response.text, todos: yield* store.get(TodoProjection.todos, session) }
  }).pipe(AgentSession.turn(session))

// Provide `TodoLayer` and your provider's `LanguageModel` (e.g. from @effect/ai-openai):
// oneTurn(SessionId.decodeSync("session-1"), "Refactor the parser").pipe(Effect.provide([TodoLayer, Model]))
