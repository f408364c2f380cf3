/**
 * The session's current todo list as an MCP resource, `todo://session/<id>`: its JSON (the list, or
 * `null` when no plan was written in this turn, and the counts) and the checklist as text. Clients
 * that `resources/subscribe` to it get `notifications/resources/updated` on every committed write
 * that changes it (a `todo/write`, or a `turn/start` clearing it), including writes other processes
 * commit where the log carries them.
 *
 * Effect's `McpServer` keeps the subscriptions per client and sends an update only to the clients
 * subscribed to its URI; over stdio it advertises `resources: { subscribe: true }`. (Its
 * request-scoped HTTP transport advertises no subscriptions in 4.1.)
 *
 * @since 0.2.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as McpSchema from "effect/ai/McpSchema"
import * as McpServer from "effect/ai/McpServer"
import type { CheckedSessionLog } from "../log/CheckedSessionLog.ts"
import type * as SessionId from "../log/SessionId.ts"
import * as ProjectionStore from "../projection/ProjectionStore.ts"
import { AgentSession } from "../todo/AgentSession.ts"
import * as Checklist from "../todo/Checklist.ts"
import * as Todo from "../todo/Todo.ts"
import * as TodoProjection from "../todo/TodoProjection.ts"

/**
 * The resource's URI for a session.
 *
 * @since 0.2.0
 * @category resources
 */
export const uriOf = (session: SessionId.SessionId): string => `todo://session/${session}`

/**
 * The resource's contents: the list as JSON, then as a checklist.
 *
 * @since 0.2.0
 * @category resources
 */
export const contents = (session: SessionId.SessionId, todos: Todo.List | null): McpSchema.ReadResourceResult => {
  const uri = uriOf(session)
  const json = { session, todos, counts: todos === null ? null : Todo.count(todos) }
  return McpSchema.ReadResourceResult.make({
    contents: [
      McpSchema.TextResourceContents.make({ uri, mimeType: "application/json", text: JSON.stringify(json) }),
      McpSchema.TextResourceContents.make({ uri, mimeType: "text/plain", text: Checklist.render(todos) })
    ]
  })
}

/**
 * Registers the resource of the `AgentSession`'s session on the `McpServer`, and notifies its
 * subscribers of every change for as long as the server runs.
 *
 * @since 0.2.0
 * @category layers
 */
export const layer: Layer.Layer<never, never, McpServer.McpServer | CheckedSessionLog | AgentSession> = Layer
  .effectDiscard(Effect.gen(function*() {
    const server = yield* McpServer.McpServer
    const store = yield* ProjectionStore.ProjectionStore
    const { sessionId } = yield* AgentSession
    const uri = uriOf(sessionId)
    yield* server.addResource({
      resource: new McpSchema.Resource({
        uri,
        name: `todo-list-${sessionId}`,
        title: `Todo list of session ${sessionId}`,
        description: "The agent's current todo list (JSON, then as a checklist); subscribe to be told when it changes",
        mimeType: "application/json"
      }),
      annotations: Context.empty(),
      handle: store.get(TodoProjection.todos, sessionId).pipe(
        Effect.map((todos) => contents(sessionId, todos)),
        Effect.mapError((error) => new McpSchema.InternalError({ message: error.message }))
      )
    })
    // Every entry that changes the list makes a new state; others (turn/end, unknown types) keep it.
    yield* store.changes(TodoProjection.todos, sessionId).pipe(
      Stream.changesWith((a, b) => a === b),
      Stream.drop(1),
      Stream.runForEach(() => server.notifications["notifications/resources/updated"]({ uri })),
      Effect.catch((error) => Effect.logWarning(`TodoListResource: no more updates of ${uri}: ${error.message}`)),
      Effect.forkScoped
    )
  })).pipe(Layer.provide(ProjectionStore.layer))
