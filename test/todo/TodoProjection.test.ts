/**
 * The todos projection's persisted identity: its checkpoints live under a stable key, so a new
 * release finds the checkpoints the last one saved (a renamed key would silently refold every
 * session from the start).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { KeyValueStore } from "effect/persistence"
import * as SessionId from "../../src/log/SessionId.ts"
import * as SessionLog from "../../src/log/SessionLog.ts"
import * as ProjectionStore from "../../src/projection/ProjectionStore.ts"
import * as TodoEvents from "../../src/todo/TodoEvents.ts"
import * as TodoProjection from "../../src/todo/TodoProjection.ts"

describe("TodoProjection.todos", () => {
  it.effect("is checkpointed under todos.<session>, version 2 (evidence joined the state)", () =>
    Effect.gen(function*() {
      const session = SessionId.decodeSync("kept")
      const log = yield* SessionLog.SessionLog
      yield* log.append(session, "todo/write", { todos: [{ content: "a", status: "pending" }] })
      const store = yield* ProjectionStore.ProjectionStore
      assert.deepStrictEqual(yield* store.get(TodoProjection.todos, session), [{ content: "a", status: "pending" }])
      const kv = yield* KeyValueStore.KeyValueStore
      const saved = yield* kv.get("todos.kept")
      assert.isDefined(saved, "no checkpoint under todos.kept")
      assert.deepInclude(JSON.parse(saved!), { version: 2, seq: 0 })
    }).pipe(
      Effect.provide(ProjectionStore.layerCheckpointed({ every: 1 }).pipe(
        Layer.provideMerge(TodoEvents.layerChecked.pipe(Layer.provideMerge(SessionLog.layerMemory))),
        Layer.provideMerge(KeyValueStore.layerMemory)
      ))
    ))
})
