/**
 * 5. Projection read: reading the current `todos` of a session after 100,000 events against after
 * 10 events, on the embedded JSONL log. Reads must not refold.
 */
import { NodeServices } from "@effect/platform-node"
import { Effect, Layer, ManagedRuntime } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as ProjectionStore from "../../src/projection/ProjectionStore.ts"
import * as SessionId from "../../src/log/SessionId.ts"
import * as SessionLog from "../../src/log/SessionLog.ts"
import * as SessionLogFile from "../../src/log/file/SessionLogFile.ts"
import { writeSession } from "./fixtures.ts"
import { type Comparison, compare, timeRun } from "./harness.ts"
import * as TodoProjection from "../../src/todo/TodoProjection.ts"
import * as TodoEvents from "../../src/todo/TodoEvents.ts"

export const run = async (): Promise<ReadonlyArray<Comparison>> => {
  const directory = mkdtempSync(join(tmpdir(), "todo-write-bench-"))
  const long = SessionId.decodeSync("long")
  const short = SessionId.decodeSync("short")
  writeSession(directory, long, 100_000)
  writeSession(directory, short, 10)
  const runtime = ManagedRuntime.make(
    ProjectionStore.layer.pipe(
      Layer.provideMerge(TodoEvents.layerChecked),
      Layer.provideMerge(SessionLogFile.layerFileSystem({ directory })),
      Layer.provide(NodeServices.layer)
    )
  )
  // An agent backend's steady state: this process appends to its sessions, and has read each once.
  await runtime.runPromise(Effect.gen(function*() {
    const log = yield* SessionLog.SessionLog
    const store = yield* ProjectionStore.ProjectionStore
    for (const session of [long, short]) {
      yield* log.append(session, "turn/start", {})
      yield* store.get(TodoProjection.todos, session)
    }
  }))
  const reads = 200
  const read = (session: SessionId.SessionId) =>
    Effect.gen(function*() {
      const store = yield* ProjectionStore.ProjectionStore
      for (let i = 0; i < reads; i++) yield* store.get(TodoProjection.todos, session)
    })
  const result = await compare({
    name: "projection read after 100,000 events vs 10",
    rounds: 15,
    target: () => timeRun(() => runtime.runPromise(read(long)), reads),
    baseline: () => timeRun(() => runtime.runPromise(read(short)), reads),
    goal: { max: 1.5 },
    note: "per read"
  })
  await runtime.dispose()
  rmSync(directory, { recursive: true, force: true })
  return [result]
}
