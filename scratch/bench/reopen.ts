/**
 * 3. Reopen with a checkpoint: reopening a 1,000,000-event session whose projection checkpoint is
 * fresh, against reopening a 100-event session. Reopening = a new SessionLog, a new projection store,
 * and reading the current `todos`, as a new process would.
 */
import { NodeServices } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import { KeyValueStore } from "effect/persistence"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as ProjectionStore from "../../src/projection/ProjectionStore.ts"
import * as SessionId from "../../src/log/SessionId.ts"
import * as SessionLogFile from "../../src/log/file/SessionLogFile.ts"
import { writeSession } from "./fixtures.ts"
import { type Comparison, compare, timeRun } from "./harness.ts"
import * as TodoProjection from "../../src/todo/TodoProjection.ts"
import * as TodoEvents from "../../src/todo/TodoEvents.ts"

export const run = async (): Promise<ReadonlyArray<Comparison>> => {
  const root = mkdtempSync(join(tmpdir(), "todo-write-bench-"))
  const directory = join(root, "sessions")
  const long = SessionId.decodeSync("long")
  const short = SessionId.decodeSync("short")
  writeSession(directory, long, 1_000_000)
  writeSession(directory, short, 100)
  const reopen = (session: SessionId.SessionId) =>
    Effect.gen(function*() {
      const store = yield* ProjectionStore.ProjectionStore
      return yield* store.get(TodoProjection.todos, session)
    }).pipe(
      Effect.provide(
        ProjectionStore.layerCheckpointed().pipe(
          Layer.provide(TodoEvents.layerChecked.pipe(Layer.provide(SessionLogFile.layerFileSystem({ directory })))),
          Layer.provide(KeyValueStore.layerFileSystem(join(root, "checkpoints"))),
          Layer.provide(NodeServices.layer)
        )
      )
    )
  // The first opening folds the whole log and saves the checkpoint the others start from.
  await Effect.runPromise(reopen(long))
  await Effect.runPromise(reopen(short))
  const result = await compare({
    name: "reopen 1,000,000 events (checkpoint) vs 100",
    rounds: 15,
    target: () => timeRun(() => Effect.runPromise(reopen(long)), 1),
    baseline: () => timeRun(() => Effect.runPromise(reopen(short)), 1),
    goal: { max: 1.5 },
    note: "per reopen"
  })
  rmSync(root, { recursive: true, force: true })
  return [result]
}
