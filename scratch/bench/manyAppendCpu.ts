/**
 * A probe, not a benchmark with a goal: 128 sessions appending concurrently through `SessionLogFile`
 * in journal mode (each one append at a time, as `durableAppend`'s throughput rows), measured as
 * main-thread CPU and wall time per append, round after round, so the warm figure shows beside the
 * cold one. Run with `npx node --expose-gc scratch/bench/manyAppendCpu.ts [directory-root] [rounds]`
 * (default root: `/dev/shm`, where fsync is free); add `--cpu-prof` to profile it.
 */
import { NodeServices } from "@effect/platform-node"
import { Effect, Layer, ManagedRuntime } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { join } from "node:path"
import { CheckedSessionLog } from "../../src/log/CheckedSessionLog.ts"
import * as SessionLogFile from "../../src/log/file/SessionLogFile.ts"
import * as SessionId from "../../src/log/SessionId.ts"
import * as TodoEvents from "../../src/todo/TodoEvents.ts"

const payload = {
  todos: Array.from({ length: 10 }, (_, i) => ({ content: `Step ${i}: change the parser`, status: i === 0 ? "in_progress" : "pending" }))
}
const root = mkdtempSync(join(process.argv[2] ?? "/dev/shm", "many-"))
const rounds = Number(process.argv[3] ?? 10)
const sessions = Number(process.argv[4] ?? 128)
const perSession = 10
const journal = process.argv[5] !== "file"
const ids = Array.from({ length: sessions }, (_, i) => SessionId.decodeSync(`s${i}`))

const runtime = ManagedRuntime.make(
  TodoEvents.layerChecked.pipe(
    Layer.provide(SessionLogFile.layerFileSystem({ directory: join(root, "log"), journal })),
    Layer.provide(NodeServices.layer)
  )
)
const round = Effect.gen(function*() {
  const log = yield* CheckedSessionLog
  const c0 = process.threadCpuUsage()
  const t0 = process.hrtime.bigint()
  yield* Effect.forEach(ids, (id) =>
    Effect.gen(function*() {
      for (let i = 0; i < perSession; i++) yield* log.append(id, "todo/write", payload)
    }), { concurrency: "unbounded", discard: true })
  const c = process.threadCpuUsage(c0)
  return { cpu: (c.user + c.system) / (sessions * perSession), wall: Number(process.hrtime.bigint() - t0) / 1000 / (sessions * perSession) }
})
try {
  await runtime.runPromise(Effect.flatMap(CheckedSessionLog, (log) => Effect.forEach(ids, (id) => log.append(id, "turn/start", {}), { concurrency: "unbounded" })))
  for (let r = 0; r < rounds; r++) {
    globalThis.gc?.()
    const { cpu, wall } = await runtime.runPromise(round)
    console.log(`round ${r}: ${cpu.toFixed(1)} µs CPU, ${wall.toFixed(1)} µs wall per append`)
  }
} finally {
  await runtime.dispose()
  rmSync(root, { recursive: true, force: true })
}
