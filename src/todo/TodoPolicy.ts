/**
 * The deployment's policy for `todo_write`. Whether several items may be `in_progress` at once is an
 * explicit choice with no default: single-active and parallel deployments describe the tool
 * differently to the model, so guessing would silently change what the model is told. Whether a
 * completed item must carry evidence defaults to `false` (evidence is invited, not required): it is
 * an opt-in discipline, and a deployment that says nothing keeps the contract it had.
 */
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"

/**
 * The most items a list may hold unless the deployment says otherwise.
 *
 * @since 0.2.0
 * @category constants
 */
export const defaultMaxItems = 100
/**
 * The most characters an item's content may hold unless the deployment says otherwise.
 *
 * @since 0.2.0
 * @category constants
 */
export const defaultMaxContentLength = 1_000

/**
 * The policy's choices and bounds, validated.
 *
 * @since 0.2.0
 * @category models
 */
export const Options = Schema.Struct({
  /** `true`: several items may be in_progress (subagents, background work); `false`: at most one. */
  allowParallelInProgress: Schema.Boolean,
  /** `true`: every completed item must carry `evidence`; `false`: evidence is invited, not required. */
  requireCompletedEvidence: Schema.Boolean,
  /** The most items one list may hold. */
  maxItems: Schema.Int.check(Schema.isGreaterThan(0)),
  /** The most characters one item's content (and its evidence) may hold, after trimming. */
  maxContentLength: Schema.Int.check(Schema.isGreaterThan(0))
})
/**
 * The policy's choices and bounds.
 *
 * @since 0.2.0
 * @category models
 */
export type Options = typeof Options.Type

/**
 * The deployment's policy for `todo_write`.
 *
 * @since 0.2.0
 * @category services
 */
export class TodoPolicy extends Context.Service<TodoPolicy, Options>()("effect-todo-write/TodoPolicy") {}

/** Builds a policy; the in_progress choice is required, the evidence choice and the size bounds have defaults. */
export const make = (options: {
  readonly allowParallelInProgress: boolean
  readonly requireCompletedEvidence?: boolean | undefined
  readonly maxItems?: number | undefined
  readonly maxContentLength?: number | undefined
}): Effect.Effect<Options, Schema.SchemaError> =>
  decodeOptions({
    allowParallelInProgress: options.allowParallelInProgress,
    requireCompletedEvidence: options.requireCompletedEvidence ?? false,
    maxItems: options.maxItems ?? defaultMaxItems,
    maxContentLength: options.maxContentLength ?? defaultMaxContentLength
  })

const decodeOptions = Schema.decodeEffect(Options)

/** A bound that isn't a positive integer is a programming error: building the layer dies saying so. */
export const layer = (options: Parameters<typeof make>[0]): Layer.Layer<TodoPolicy> =>
  Layer.effect(TodoPolicy, Effect.map(Effect.orDie(make(options)), TodoPolicy.of))

/**
 * The policy from configuration (the environment by default):
 * `TODO_WRITE_ALLOW_PARALLEL_IN_PROGRESS` (required: true or false), `TODO_WRITE_REQUIRE_COMPLETED_EVIDENCE`
 * (default false), `TODO_WRITE_MAX_ITEMS` and `TODO_WRITE_MAX_CONTENT_LENGTH` (optional).
 */
export const config: Config.Config<Options> = Config.all({
  allowParallelInProgress: Config.Boolean("TODO_WRITE_ALLOW_PARALLEL_IN_PROGRESS"),
  requireCompletedEvidence: Config.Boolean("TODO_WRITE_REQUIRE_COMPLETED_EVIDENCE").pipe(Config.withDefault(false)),
  maxItems: Config.schema(Options.fields.maxItems, "TODO_WRITE_MAX_ITEMS").pipe(
    Config.withDefault(defaultMaxItems)
  ),
  maxContentLength: Config.schema(Options.fields.maxContentLength, "TODO_WRITE_MAX_CONTENT_LENGTH").pipe(
    Config.withDefault(defaultMaxContentLength)
  )
})

/**
 * The policy from configuration (`config` by default: the environment).
 *
 * @since 0.2.0
 * @category layers
 */
export const layerConfig = (
  policyConfig: Config.Config<Options> = config
): Layer.Layer<TodoPolicy, Config.ConfigError> =>
  Layer.effect(
    TodoPolicy,
    Effect.gen(function*() {
      return TodoPolicy.of(yield* policyConfig)
    })
  )
