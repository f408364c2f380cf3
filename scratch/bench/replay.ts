/**
 * 2. Replay: loading a 100,000-event JSONL session with invariant checks and the `todos` fold,
 * against reading the file and running JSON.parse on each line.
 */
import { NodeServices } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
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
  const events = 100_000
  const directory = mkdtempSync(join(tmpdir(), "todo-write-bench-"))
  const session = SessionId.decodeSync("replay")
  const path = writeSession(directory, session, events)
  const log = TodoEvents.layerChecked.pipe(
    Layer.provide(SessionLogFile.layerFileSystem({ directory })),
    Layer.provide(NodeServices.layer)
  )
  // A fresh projection store each time: a reopened session folds its whole log.
  const replay = Effect.gen(function*() {
    const store = yield* ProjectionStore.ProjectionStore
    return yield* store.get(TodoProjection.todos, session)
  }).pipe(Effect.provide(ProjectionStore.layer.pipe(Layer.provide(log))))
  let last: unknown
  const baseline = () => {
    const lines = readFileSync(path, "utf8").split("\n")
    for (const line of lines) if (line.length > 0) last = JSON.parse(line)
  }
  const result = await compare({
    name: `replay, ${events.toLocaleString("en")} events`,
    rounds: 7,
    target: () => timeRun(() => Effect.runPromise(replay), events),
    baseline: () => timeRun(baseline, events),
    goal: { max: 2 },
    note: "per event"
  })
  rmSync(directory, { recursive: true, force: true })
  if (last === undefined) throw new Error("the baseline read nothing")
  return [result]
}


