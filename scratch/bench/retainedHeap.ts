/**
 * 7. Retained memory of a long-running server: one process reads the `todos` of 20,000 sessions
 * (files of 40 events each), each once, and appends to every 20th (its writer is closed once idle),
 * through the file log and the projection store (at most 10,000 cells per projection). What stays
 * after a collection (heap + array buffers + external memory, with `--expose-gc`) once 20,000
 * sessions have been served, against once 10,000 have: bounded means serving twice the sessions
 * doesn't retain (much) more.
 */
import { NodeServices } from "@effect/platform-node"
import { Effect, Layer, ManagedRuntime } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { join } from "node:path"
import { CheckedSessionLog } from "../../src/log/CheckedSessionLog.ts"
import * as SessionLogFile from "../../src/log/file/SessionLogFile.ts"
import * as SessionId from "../../src/log/SessionId.ts"
import * as ProjectionStore from "../../src/projection/ProjectionStore.ts"
import * as TodoEvents from "../../src/todo/TodoEvents.ts"
import * as TodoProjection from "../../src/todo/TodoProjection.ts"
import { writeSession } from "./fixtures.ts"
import type { Comparison } from "./harness.ts"

const gc = () => (globalThis as { gc?: () => void }).gc?.()

/** Memory retained after full collections, in bytes. */
const retained = async () => {
  for (let i = 0; i < 3; i++) {
    gc()
    await new Promise((resolve) => setImmediate(resolve))
  }
  const usage = process.memoryUsage()
  return usage.heapUsed + usage.arrayBuffers + usage.external
}

const list = (n: number) => ({
  todos: [
    { content: `Read session ${n}'s config loader`, status: "completed" },
    { content: "Change the parser", status: "in_progress" },
    { content: "Run the tests", status: "pending" }
  ]
})

export const run = async (): Promise<ReadonlyArray<Comparison>> => {
  const directory = mkdtempSync(join(process.cwd(), ".bench-heap-"))
  for (let n = 0; n < 20_000; n++) writeSession(directory, `agent-${n}`, 40)
  const runtime = ManagedRuntime.make(
    ProjectionStore.layer.pipe(
      Layer.provideMerge(TodoEvents.layerChecked),
      Layer.provide(SessionLogFile.layerFileSystem({ directory, journal: true, idleWriterTimeout: "300 millis" })),
      Layer.provide(NodeServices.layer)
    )
  )
  const serve = (from: number, to: number) =>
    runtime.runPromise(Effect.gen(function*() {
      const log = yield* CheckedSessionLog
      const store = yield* ProjectionStore.ProjectionStore
      yield* Effect.forEach(
        Array.from({ length: to - from }, (_, i) => from + i),
        (n) =>
          Effect.gen(function*() {
            const session = SessionId.decodeSync(`agent-${n}`)
            if (n % 20 === 0) yield* log.append(session, "todo/write", list(n))
            const todos = yield* store.get(TodoProjection.todos, session)
            if (todos === null) return yield* Effect.die(`agent-${n} has no todos`)
          }),
        { concurrency: 32, discard: true }
      )
    }))
  /** Serves sessions up to `to`, lets idle writers close, and measures what stays. */
  const after = async (from: number, to: number) => {
    await serve(from, to)
    await new Promise((resolve) => setTimeout(resolve, 700))
    return retained()
  }
  try {
    const empty = await after(0, 0)
    const tenThousand = await after(0, 10_000)
    const twentyThousand = await after(10_000, 20_000)
    const perSession = (tenThousand - empty) / 10_000
    return [{
      name: "retained memory, 20,000 sessions served vs 10,000",
      target: twentyThousand / 1024,
      baseline: tenThousand / 1024,
      ratio: twentyThousand / tenThousand,
      goal: { max: 1.2 },
      note: `KiB retained (heap + buffers + external); empty ${(empty / 1024 / 1024).toFixed(1)} MiB, ` +
        `${(perSession / 1024).toFixed(2)} KiB per session up to the projection store's 10,000 cells, ` +
        `${((twentyThousand - tenThousand) / 10_000).toFixed(0)} bytes per session after`
    }]
  } finally {
    await runtime.dispose()
    rmSync(directory, { recursive: true, force: true })
  }
}
