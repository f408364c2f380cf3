/**
 * Each configuration key of `TodoPolicy.layerConfig`, set through a ConfigProvider, changes what
 * `todo_write` accepts: the key is read, under its documented name, and applied.
 */
import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect, Exit, Layer } from "effect"
import * as SessionId from "../../src/log/SessionId.ts"
import * as SessionLog from "../../src/log/SessionLog.ts"
import * as AgentSession from "../../src/todo/AgentSession.ts"
import * as TodoEvents from "../../src/todo/TodoEvents.ts"
import * as TodoPolicy from "../../src/todo/TodoPolicy.ts"
import * as TodoWrite from "../../src/todo/TodoWrite.ts"
import { failureOf } from "../log/SessionLogConformance.ts"

/** Calls todo_write once under the policy read from `env`. */
const writeUnder = (env: Record<string, string>, todos: ReadonlyArray<{ content: string; status: string }>) =>
  Effect.exit(TodoWrite.execute({ todos })).pipe(
    Effect.provide(Layer.mergeAll(
      TodoEvents.layerChecked.pipe(Layer.provide(SessionLog.layerMemory)),
      TodoPolicy.layerConfig().pipe(Layer.provide(ConfigProvider.layer(ConfigProvider.fromEnv({ env })))),
      AgentSession.layer(SessionId.decodeSync("config-session"))
    ))
  )

const rejectedWith = (exit: Exit.Exit<unknown, { readonly message: string }>, code: string, key: string) => {
  assert.isTrue(Exit.isFailure(exit), `${key} was not applied: the list was accepted`)
  assert.include(failureOf(exit).message, `(${code})`)
}

const parallel = { TODO_WRITE_ALLOW_PARALLEL_IN_PROGRESS: "true" }
const single = { TODO_WRITE_ALLOW_PARALLEL_IN_PROGRESS: "false" }
const twoActive = [{ content: "a", status: "in_progress" }, { content: "b", status: "in_progress" }]

describe("TodoPolicy.layerConfig: each key is read and applied", () => {
  it.effect("TODO_WRITE_ALLOW_PARALLEL_IN_PROGRESS", () =>
    Effect.gen(function*() {
      assert.isTrue(Exit.isSuccess(yield* writeUnder(parallel, twoActive)), "true allows two in_progress items")
      rejectedWith(yield* writeUnder(single, twoActive), "too_many_in_progress", "TODO_WRITE_ALLOW_PARALLEL_IN_PROGRESS=false")
    }))

  it.effect("TODO_WRITE_MAX_ITEMS", () =>
    Effect.gen(function*() {
      const three = ["a", "b", "c"].map((content) => ({ content, status: "pending" }))
      assert.isTrue(Exit.isSuccess(yield* writeUnder({ ...single, TODO_WRITE_MAX_ITEMS: "3" }, three)))
      rejectedWith(yield* writeUnder({ ...single, TODO_WRITE_MAX_ITEMS: "2" }, three), "too_many_items", "TODO_WRITE_MAX_ITEMS")
    }))

  it.effect("TODO_WRITE_MAX_CONTENT_LENGTH", () =>
    Effect.gen(function*() {
      const six = [{ content: "abcdef", status: "pending" }]
      assert.isTrue(Exit.isSuccess(yield* writeUnder({ ...single, TODO_WRITE_MAX_CONTENT_LENGTH: "6" }, six)))
      rejectedWith(
        yield* writeUnder({ ...single, TODO_WRITE_MAX_CONTENT_LENGTH: "5" }, six),
        "content_too_long",
        "TODO_WRITE_MAX_CONTENT_LENGTH"
      )
    }))
})
