/**
 * A probe, not a benchmark with a goal: 128 sessions appending concurrently through `SessionLogFile`
 * in journal mode (each one append at a time, as `durableAppend`'s throughput rows), measured as
 * main-thread CPU and wall time per append, round after round, so the warm figure shows beside the
 * cold one. Run with `npx node --expose-gc scratch/bench/manyAppendCpu.ts [directory-root] [rounds] [sessions] [mode] [payload]`
 * (default root: `/dev/shm`, where fsync is free; mode `journal`, `file`, or `memory`: the in-memory
 * log, for what the layers above the file backend cost; payload `plain`, the benchmarks' object, or
 * `tool`, the same list as `todo_write` appends it); add `--cpu-prof` to profile it.
 *
 * With `--expose-gc` it collects fully between rounds: the pauses fall outside the rounds, but the
 * sweeping they start runs on V8's threads during the next (in "other threads"), and a `--cpu-prof`
 * of the whole run counts the pauses themselves (~30 ms a round, 12-22% of the samples at 40 rounds).
 * Without it, the rounds see the collections the appends cause themselves. The CPU per append falls
 * for the first ~20 rounds as V8 optimizes the path: give it 40 or more.
 */
import { NodeServices } from "@effect/platform-node"
import { Effect, Layer, ManagedRuntime } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { join } from "node:path"
import { CheckedSessionLog } from "../../src/log/CheckedSessionLog.ts"
import * as SessionLogFile from "../../src/log/file/SessionLogFile.ts"
import * as SessionId from "../../src/log/SessionId.ts"
import * as SessionLog from "../../src/log/SessionLog.ts"
import * as TodoEvents from "../../src/todo/TodoEvents.ts"
import { type PerAppend, perAppend, todoWritePayload, todoWriteToolPayload } from "./fixtures.ts"

const root = mkdtempSync(join(process.argv[2] ?? "/dev/shm", "many-"))
const rounds = Number(process.argv[3] ?? 10)
const sessions = Number(process.argv[4] ?? 128)
const perSession = 10
const mode = process.argv[5] ?? "journal"
const journal = mode === "journal"
const payload = process.argv[6] === "tool" ? todoWriteToolPayload : todoWritePayload
const ids = Array.from({ length: sessions }, (_, i) => SessionId.decodeSync(`s${i}`))

const runtime = ManagedRuntime.make(
  TodoEvents.layerChecked.pipe(
    Layer.provide(
      mode === "memory" ? SessionLog.layerMemory : SessionLogFile.layerFileSystem({ directory: join(root, "log"), journal })
    ),
    Layer.provide(NodeServices.layer)
  )
)
const round = Effect.flatMap(CheckedSessionLog, (log) =>
  perAppend(
    sessions * perSession,
    Effect.forEach(ids, (id) =>
      Effect.gen(function*() {
        for (let i = 0; i < perSession; i++) yield* log.append(id, "todo/write", payload)
      }), { concurrency: "unbounded", discard: true })
  ))
try {
  await runtime.runPromise(Effect.flatMap(CheckedSessionLog, (log) => Effect.forEach(ids, (id) => log.append(id, "turn/start", {}), { concurrency: "unbounded" })))
  const warm: Array<PerAppend> = []
  for (let r = 0; r < rounds; r++) {
    globalThis.gc?.()
    const measured = await runtime.runPromise(round)
    console.log(`round ${r}: ${measured.cpu.toFixed(1)} µs CPU (other threads ${measured.others.toFixed(1)}), ${measured.wall.toFixed(1)} µs wall, ${measured.idle.toFixed(1)} µs idle per append`)
    if (r >= rounds / 3) warm.push(measured)
  }
  const median = (xs: Array<number>) => xs.sort((a, b) => a - b)[xs.length >> 1]!
  console.log(
    `median of the last ${warm.length} rounds: ${median(warm.map((m) => m.cpu)).toFixed(1)} µs CPU (other threads ${
      median(warm.map((m) => m.others)).toFixed(1)
    }), ${
      median(warm.map((m) => m.wall)).toFixed(1)
    } µs wall, ${median(warm.map((m) => m.idle)).toFixed(1)} µs idle (the event loop waiting) per append`
  )
} finally {
  await runtime.dispose()
  rmSync(root, { recursive: true, force: true })
}
