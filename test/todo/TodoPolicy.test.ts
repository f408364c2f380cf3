import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect, Exit, Layer } from "effect"
import * as TodoPolicy from "../../src/todo/TodoPolicy.ts"

const fromEnv = (env: Record<string, string>) =>
  Effect.map(TodoPolicy.TodoPolicy, (policy) => policy).pipe(
    Effect.provide(TodoPolicy.layerConfig().pipe(Layer.provide(ConfigProvider.layer(ConfigProvider.fromEnv({ env })))))
  )

describe("TodoPolicy", () => {
  it.effect("takes the in_progress choice explicitly, with evidence invited and default size bounds", () =>
    Effect.gen(function*() {
      const policy = yield* TodoPolicy.TodoPolicy
      assert.deepStrictEqual(policy, {
        allowParallelInProgress: true,
        requireCompletedEvidence: false,
        maxItems: 100,
        maxContentLength: 1000
      })
    }).pipe(Effect.provide(TodoPolicy.layer({ allowParallelInProgress: true }))))

  it.effect("reads the policy from configuration", () =>
    Effect.gen(function*() {
      const policy = yield* fromEnv({ TODO_WRITE_ALLOW_PARALLEL_IN_PROGRESS: "false", TODO_WRITE_MAX_ITEMS: "20" })
      assert.deepStrictEqual(policy, {
        allowParallelInProgress: false,
        requireCompletedEvidence: false,
        maxItems: 20,
        maxContentLength: 1000
      })
      const strict = yield* fromEnv({
        TODO_WRITE_ALLOW_PARALLEL_IN_PROGRESS: "true",
        TODO_WRITE_REQUIRE_COMPLETED_EVIDENCE: "true"
      })
      assert.isTrue(strict.requireCompletedEvidence)
    }))

  it.effect("fails naming the key when the choice is missing or invalid", () =>
    Effect.gen(function*() {
      const missing = yield* Effect.exit(fromEnv({}))
      assert.isTrue(Exit.isFailure(missing))
      assert.include(String(missing), "TODO_WRITE_ALLOW_PARALLEL_IN_PROGRESS")
      const invalid = yield* Effect.exit(fromEnv({ TODO_WRITE_ALLOW_PARALLEL_IN_PROGRESS: "maybe" }))
      assert.include(String(invalid), "TODO_WRITE_ALLOW_PARALLEL_IN_PROGRESS")
      const bound = yield* Effect.exit(fromEnv({ TODO_WRITE_ALLOW_PARALLEL_IN_PROGRESS: "true", TODO_WRITE_MAX_ITEMS: "0" }))
      assert.include(String(bound), "TODO_WRITE_MAX_ITEMS")
    }))
})
