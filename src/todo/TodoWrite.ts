/**
 * The model-facing `todo_write` tool. The model sends the ENTIRE list every call; it replaces the
 * previous one. The tool keeps no state: it validates under the deployment's policy, appends one
 * `todo/write` event to the calling agent's session log, and answers with one line of counts.
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import type * as JsonSchema from "effect/JsonSchema"
import * as Schema from "effect/Schema"
import * as SchemaGetter from "effect/SchemaGetter"
import * as OpenAiStructuredOutput from "effect/ai/OpenAiStructuredOutput"
import * as Tool from "effect/ai/Tool"
import * as Toolkit from "effect/ai/Toolkit"
import { CheckedSessionLog } from "../log/CheckedSessionLog.ts"
import type * as SessionLog from "../log/SessionLog.ts"
import { AgentSession } from "./AgentSession.ts"
import * as Todo from "./Todo.ts"
import * as TodoEvents from "./TodoEvents.ts"
import { type Options as Policy, TodoPolicy } from "./TodoPolicy.ts"
import { compactNullable } from "./internal/compactNullable.ts"
import * as TodoValidation from "./TodoValidation.ts"
import { modelText, NoOwningSessionError, TodoWriteError } from "./TodoWriteError.ts"
import * as TodoShape from "./TodoShape.ts"

/**
 * The tool's name, as every model and MCP client sees it.
 *
 * @since 0.2.0
 * @category metadata
 */
export const name = "todo_write"

/**
 * The tool's human-readable title.
 *
 * @since 0.2.0
 * @category metadata
 */
export const title = "Todo list"

/**
 * What the tool does to the world, as MCP tool annotations and `effect/ai` tool annotations say it:
 * it writes (not read-only), replaces only its own list (not destructive), the same list twice is
 * the same state (idempotent), and it touches nothing outside the session log (closed world).
 *
 * @since 0.2.0
 * @category metadata
 */
export const hints = { readOnly: false, destructive: false, idempotent: true, openWorld: false } as const

/**
 * The policy choices the description depends on. `requireCompletedEvidence` defaults to `false`.
 *
 * @since 0.2.0
 * @category metadata
 */
export type DescriptionPolicy = Pick<Policy, "allowParallelInProgress"> & {
  readonly requireCompletedEvidence?: boolean | undefined
}

/**
 * The one sentence that differs between single-active and parallel deployments.
 *
 * @since 0.2.0
 * @category metadata
 */
export const activeClause = (policy: Pick<Policy, "allowParallelInProgress">): string =>
  policy.allowParallelInProgress
    ? "Mark every todo being worked on in_progress; several only when work truly runs in parallel (subagents, background commands)."
    : "Keep at most one todo in_progress, and exactly one while work remains."

/**
 * The one sentence that differs between deployments that invite evidence and those that require it.
 *
 * @since 0.2.0
 * @category metadata
 */
export const evidenceClause = (policy: Pick<DescriptionPolicy, "requireCompletedEvidence">): string =>
  policy.requireCompletedEvidence === true
    ? "Completed todos must cite evidence: a passing check or an artifact."
    : "Completed todos may cite evidence: a passing check or an artifact."

/**
 * What the model reads about the tool. Short on purpose: it is paid for on every request.
 *
 * @since 0.2.0
 * @category metadata
 */
export const description = (policy: DescriptionPolicy): string =>
  [
    "Plan and track multi-step work as a todo list the user sees.",
    "Send the ENTIRE list every call: it REPLACES the previous one (no partial updates, no ids).",
    "Before multi-step work, write one todo per concrete step.",
    activeClause(policy),
    "Mark a todo completed the moment it is done.",
    evidenceClause(policy),
    "Skip the list for trivial single-step tasks.",
    "pending = not started; in_progress = being worked on; completed = done."
  ].join("\n")

/**
 * The JSON Schema of the arguments, closed at every level (`additionalProperties: false`).
 *
 * @since 0.2.0
 * @category metadata
 */
export const parametersJsonSchema = Schema.toJsonSchemaDocument(Todo.Write, { onExcessProperty: "error" }).schema

/**
 * The parameters in the form OpenAI's strict mode demands: every key listed in `required`, an
 * optional one nullable (`evidence: null` means none, which validation accepts). Derived from the
 * one item schema by `OpenAiStructuredOutput`, its nullable unions written compactly. What the
 * `effect/ai` tool advertises, so strict providers accept it.
 *
 * @since 0.2.0
 * @category metadata
 */
export const strictParametersJsonSchema: JsonSchema.JsonSchema = compactNullable(
  OpenAiStructuredOutput.toCodecOpenAI(Todo.Write).jsonSchema
)

/**
 * The tool's parameters as `effect/ai` and the providers see them: every JSON Schema made of it is
 * `parametersJsonSchema`, and every decoder passes the raw arguments through unchanged. The handler
 * then validates them itself, so an excess key is rejected (a `Todo.Write` parameter schema would
 * strip it silently) and shape and value problems come back together as the tool result (a provider
 * that decodes the arguments with a `Todo.Write` schema fails the whole `generateText` on a bad
 * status instead). `Schema.Any` and not `Schema.Unknown`: the providers' JSON codec replaces
 * `Unknown` with a generic JSON value, dropping this check's JSON Schema; `decodeTo(Unknown)` only
 * types the handler's input as `unknown`.
 *
 * @since 0.2.0
 * @category tool
 */
export const Parameters = Schema.Any.check(
  Schema.makeFilter<unknown>(() => true, { toJsonSchema: () => strictParametersJsonSchema })
).pipe(Schema.decodeTo(Schema.Unknown))

/**
 * What a successful call answers: the list as stored and its counts.
 *
 * @since 0.2.0
 * @category models
 */
export const Success = Schema.Struct({
  /** The list as stored: content trimmed. */
  todos: Todo.List,
  counts: Todo.Counts
})
/**
 * @since 0.2.0
 * @category models
 */
export type Success = typeof Success.Type

// The results below are text for the model on their encoded side; nothing decodes them back.
const textOnly = SchemaGetter.forbidden<never, string>(() => "todo_write results are text for the model and don't decode")

/**
 * A successful call's result: the typed `Success` on the decoded side (the program's
 * `toolResults[i].result`), the one-line summary on the encoded side. Providers send the model
 * `JSON.stringify` of the encoded result, so this is what the model reads.
 *
 * @since 0.2.0
 * @category tool
 */
export const SuccessText = Schema.String.pipe(Schema.decodeTo(Schema.toType(Success), {
  decode: textOnly,
  encode: SchemaGetter.transform((success: Success) => Todo.summary(success.counts))
}))

/**
 * A failed call's result: the typed `TodoWriteError` on the decoded side, what the model should read
 * on the encoded side (`TodoWriteError.modelText`: the message; for a storage failure a short line
 * without paths or driver text).
 *
 * @since 0.2.0
 * @category tool
 */
export const FailureText = Schema.String.pipe(Schema.decodeTo(Schema.toType(TodoWriteError), {
  decode: textOnly,
  encode: SchemaGetter.transform(modelText)
}))

/**
 * Validates the arguments, then appends them to the calling agent's session log. For callers that
 * aren't a model (tests, other tools, UIs); the tool's handler is exactly this.
 *
 * @since 0.2.0
 * @category execution
 */
export const execute = (input: unknown): Effect.Effect<Success, TodoWriteError, TodoPolicy | CheckedSessionLog> =>
  Effect.flatMap(Effect.all([TodoPolicy, CheckedSessionLog]), ([policy, log]) =>
    executeWith(policy, log)(input))

const run = Effect.fn("TodoWrite.execute")(
  function*(policy: Policy, log: SessionLog.Service, input: unknown): Effect.fn.Return<Success, TodoWriteError> {
    const todos = yield* Effect.fromResult(TodoValidation.validate(policy, input))
    const owner = yield* Effect.serviceOption(AgentSession)
    if (owner._tag === "None") return yield* NoOwningSessionError.instance
    yield* log.append(owner.value.sessionId, TodoEvents.write.type, TodoShape.markValidated({ todos })).pipe(
      // The model reads a short line without the detail (`modelText`); operators get all of it here.
      Effect.tapError((error) => Effect.logError("todo_write could not save the list", Cause.fail(error)))
    )
    return { todos, counts: Todo.count(todos) }
  }
)

/**
 * `execute` with its services already in hand, as the tool's handler runs it.
 *
 * @since 0.2.0
 * @category execution
 */
export const executeWith = (policy: Policy, log: SessionLog.Service) => (input: unknown) => run(policy, log, input)

/**
 * The tool for a deployment's policy. It advertises the closed JSON Schema and hands the raw
 * arguments to the handler (`Parameters`), which validates them itself, so an excess key is rejected
 * (never stripped) whoever calls the toolkit, and shape and value problems come back together,
 * coded. Failures are returned to the model as the tool result; success and failure both reach it as
 * text (`SuccessText`, `FailureText`).
 *
 * @since 0.2.0
 * @category tool
 */
export const tool = (policy: Pick<Policy, "allowParallelInProgress">) =>
  Tool.make(name, {
    description: description(policy),
    parameters: Parameters,
    success: SuccessText,
    failure: FailureText,
    failureMode: "return"
  }).annotate(Tool.Strict, true).annotate(Tool.Title, title).annotate(Tool.Readonly, hints.readOnly)
    .annotate(Tool.Destructive, hints.destructive).annotate(Tool.Idempotent, hints.idempotent)
    .annotate(Tool.OpenWorld, hints.openWorld)

/**
 * A toolkit holding just `todo_write`, to merge with an agent's own tools.
 *
 * @since 0.2.0
 * @category tool
 */
export const toolkit = (policy: Pick<Policy, "allowParallelInProgress">) => Toolkit.make(tool(policy))

/**
 * The toolkit for the policy in context.
 *
 * @since 0.2.0
 * @category tool
 */
export const toolkitFromPolicy = Effect.map(TodoPolicy, toolkit)

/**
 * The handler for `todo_write`, for a toolkit of any policy. It needs the policy and the session log
 * when built; the `AgentSession` is read at call time from the caller's context.
 *
 * @since 0.2.0
 * @category layers
 */
export const layer = toolkit({ allowParallelInProgress: false }).toLayer(Effect.gen(function*() {
  const run = executeWith(yield* TodoPolicy, yield* CheckedSessionLog)
  return { [name]: (params: unknown) => run(params) }
}))
