/**
 * The model-facing `todo_write` tool. The model sends the ENTIRE list every call; it replaces the
 * previous one. The tool keeps no state: it validates under the deployment's policy, appends one
 * `todo/write` event to the calling agent's session log, and answers with one line of counts.
 */
import { Effect, Schema } from "effect"
import { Prompt, Tool, Toolkit } from "effect/ai"
import { AgentSession } from "./AgentSession.ts"
import * as SessionEvent from "./SessionEvent.ts"
import { SessionLog } from "./SessionLog.ts"
import * as Todo from "./Todo.ts"
import { type Options as Policy, TodoPolicy } from "./TodoPolicy.ts"
import * as TodoValidation from "./TodoValidation.ts"
import { NoOwningSessionError, TodoWriteError } from "./TodoWriteError.ts"

export const name = "todo_write"

/** The one sentence that differs between single-active and parallel deployments. */
export const activeClause = (policy: Pick<Policy, "allowParallelInProgress">): string =>
  policy.allowParallelInProgress
    ? "Mark every todo you are actively working on in_progress; several only when work truly runs in parallel (e.g. subagents or background commands)."
    : "Keep at most one todo in_progress, and exactly one while work remains."

/** What the model reads about the tool. Short on purpose: it is paid for on every request. */
export const description = (policy: Pick<Policy, "allowParallelInProgress">): string =>
  [
    "Plan and track multi-step work as a todo list the user sees.",
    "Send the ENTIRE list on every call: it REPLACES the previous list (no partial updates, no ids).",
    "Before starting work of several steps, write one todo per concrete step.",
    activeClause(policy),
    "Mark a todo completed the moment it is done.",
    "Skip the list for trivial single-step tasks.",
    "Statuses: pending = not started; in_progress = being worked on now; completed = done."
  ].join("\n")

/** The JSON Schema of the arguments, closed at every level (`additionalProperties: false`). */
export const parametersJsonSchema = Schema.toJsonSchemaDocument(Todo.Write, { onExcessProperty: "error" }).schema

export const Success = Schema.Struct({
  /** The list as stored: content trimmed. */
  todos: Todo.List,
  counts: Todo.Counts
})
export type Success = typeof Success.Type

/**
 * Validates the arguments, then appends them to the calling agent's session log. For callers that
 * aren't a model (tests, other tools, UIs); the tool's handler is exactly this.
 */
export const execute = (input: unknown): Effect.Effect<Success, TodoWriteError, TodoPolicy | SessionLog> =>
  Effect.flatMap(Effect.all([TodoPolicy, SessionLog]), ([policy, log]) =>
    executeWith(policy, log)(input))

const run = Effect.fn("TodoWrite.execute")(
  function*(policy: Policy, log: SessionLog["Service"], input: unknown): Effect.fn.Return<Success, TodoWriteError> {
    const todos = yield* Effect.fromResult(TodoValidation.validate(policy, input))
    const owner = yield* Effect.serviceOption(AgentSession)
    if (owner._tag === "None") return yield* NoOwningSessionError.instance
    yield* log.append(owner.value.sessionId, SessionEvent.TodoWrite, Todo.markValidated({ todos }))
    return { todos, counts: Todo.count(todos) }
  }
)

/** `execute` with its services already in hand, as the tool's handler runs it. */
export const executeWith = (policy: Policy, log: SessionLog["Service"]) => (input: unknown) => run(policy, log, input)

/**
 * The tool for a deployment's policy. Its parameters are the closed JSON Schema above, and the
 * handler validates the raw arguments itself, so an excess key is rejected (never stripped) whoever
 * calls the toolkit, and shape and value problems come back together, coded, as the tool result.
 */
export const tool = (policy: Pick<Policy, "allowParallelInProgress">) =>
  Tool.dynamic(name, {
    description: description(policy),
    parameters: parametersJsonSchema,
    success: Success,
    failure: TodoWriteError,
    failureMode: "return",
    toModelOutput: (result: Success) => [Prompt.makePart("text", { text: Todo.summary(result.counts) })]
  }).annotate(Tool.Strict, true).annotate(Tool.Title, "Todo list").annotate(Tool.Idempotent, true)

export const toolkit = (policy: Pick<Policy, "allowParallelInProgress">) => Toolkit.make(tool(policy))

/** The toolkit for the policy in context. */
export const toolkitFromPolicy = Effect.map(TodoPolicy, toolkit)

/**
 * The handler for `todo_write`, for a toolkit of any policy. It needs the policy and the session log
 * when built; the `AgentSession` is read at call time from the caller's context.
 */
export const layer = toolkit({ allowParallelInProgress: false }).toLayer(Effect.gen(function*() {
  const run = executeWith(yield* TodoPolicy, yield* SessionLog)
  return { [name]: (params: unknown) => run(params) }
}))
