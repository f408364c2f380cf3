/**
 * A probe for the lone append's tail (`durableAppend`'s p99/p50): one session appending one event at a
 * time through `SessionLogFile` on this disk, in rounds of 25 alternating with rounds of bare
 * write+fsync, as the benchmark runs them (without SQLite's). Each append slower than 3× the median
 * is set beside what happened during it: a garbage collection (`PerformanceObserver`), or the first
 * of its round. Run: `npx node scratch/bench/experiments/loneTail.ts [journal|file] [rounds]`.
 */
import { NodeServices } from "@effect/platform-node"
import { Effect, Layer, ManagedRuntime } from "effect"
import { closeSync, fsyncSync, mkdtempSync, openSync, rmSync, writeSync } from "node:fs"
import { join } from "node:path"
import { PerformanceObserver, performance } from "node:perf_hooks"
import { CheckedSessionLog } from "../../../src/log/CheckedSessionLog.ts"
import * as BlockingIo from "../../../src/log/file/BlockingIo.ts"
import * as Format from "../../../src/log/file/Format.ts"
import * as SessionLogFile from "../../../src/log/file/SessionLogFile.ts"
import * as SessionId from "../../../src/log/SessionId.ts"
import * as TodoEvents from "../../../src/todo/TodoEvents.ts"
import { todoWritePayload as payload } from "../fixtures.ts"

const journal = (process.argv[2] ?? "journal") === "journal"
const rounds = Number(process.argv[3] ?? 200)
const json = JSON.stringify(payload)
const root = mkdtempSync(join(process.cwd(), ".tail-"))
// The blocking calls' time in the current append: how much of a slow one the disk's sync took.
let syncUs = 0
let otherCallsUs = 0
const timed = <A extends ReadonlyArray<unknown>, R>(sync: boolean, f: (...args: A) => R) => (...args: A): R => {
  const start = performance.now()
  const result = f(...args)
  if (sync) syncUs += (performance.now() - start) * 1000
  else otherCallsUs += (performance.now() - start) * 1000
  return result
}
const node = BlockingIo.node
const blocking: BlockingIo.Blocking = {
  write: timed(false, node.write),
  writeAt: timed(false, node.writeAt),
  sync: timed(true, node.sync),
  datasync: timed(true, node.datasync),
  truncate: node.truncate,
  lstat: timed(false, node.lstat),
  stillAt: timed(false, node.stillAt)
}
const runtime = ManagedRuntime.make(
  TodoEvents.layerChecked.pipe(
    Layer.provide(SessionLogFile.layerFileSystem({ directory: join(root, "log"), journal })),
    Layer.provide(Layer.merge(NodeServices.layer, Layer.succeed(BlockingIo.BlockingIo, blocking)))
  )
)
const gcs: Array<{ readonly start: number; readonly end: number; readonly kind: number }> = []
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    const detail = (entry as PerformanceEntry & { readonly detail?: { readonly kind: number } }).detail
    gcs.push({ start: entry.startTime, end: entry.startTime + entry.duration, kind: detail?.kind ?? 0 })
  }
}).observe({ entryTypes: ["gc"] })

interface Sample {
  readonly start: number
  readonly us: number
  readonly sync: number
  readonly calls: number
  readonly position: number
}
const id = SessionId.decodeSync("lone")
const targets: Array<Sample> = []
const bare: Array<number> = []
const fd = openSync(join(root, "bare.jsonl"), "a")
let seq = 0
const round = Effect.gen(function*() {
  const log = yield* CheckedSessionLog
  for (let i = 0; i < 25; i++) {
    syncUs = otherCallsUs = 0
    const start = performance.now()
    yield* log.append(id, "todo/write", payload)
    targets.push({ start, us: (performance.now() - start) * 1000, sync: syncUs, calls: otherCallsUs, position: i })
  }
})
try {
  for (let r = 0; r < rounds; r++) {
    await runtime.runPromise(round)
    for (let i = 0; i < 25; i++) {
      const start = performance.now()
      writeSync(fd, Format.entryLine("todo/write", seq++, 0, json))
      fsyncSync(fd)
      bare.push((performance.now() - start) * 1000)
    }
  }
  await new Promise((resolve) => setTimeout(resolve, 100))
  const measured = targets.slice(targets.length / 2)
  const sorted = measured.map((s) => s.us).sort((a, b) => a - b)
  const bareSorted = bare.slice(bare.length / 2).sort((a, b) => a - b)
  const at = (xs: ReadonlyArray<number>, p: number) => xs[Math.floor(xs.length * p)]!
  const p50 = at(sorted, 0.5)
  console.log(`${journal ? "journal" : "fsync per file"}: p50 ${p50.toFixed(0)} µs, p99 ${at(sorted, 0.99).toFixed(0)} (${(at(sorted, 0.99) / p50).toFixed(1)}×); bare p50 ${at(bareSorted, 0.5).toFixed(0)}, p99 ${at(bareSorted, 0.99).toFixed(0)} (${(at(bareSorted, 0.99) / at(bareSorted, 0.5)).toFixed(1)}×)`)
  const slow = measured.filter((s) => s.us > 3 * p50)
  const withGc = slow.filter((s) => gcs.some((g) => g.end > s.start && g.start < s.start + s.us / 1000))
  const first = slow.filter((s) => s.position === 0)
  console.log(`slower than 3× p50: ${slow.length} of ${measured.length}; during a GC: ${withGc.length}; first of a round: ${first.length}`)
  const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!
  console.log(`medians: sync ${median(measured.map((s) => s.sync)).toFixed(0)} µs, other calls ${median(measured.map((s) => s.calls)).toFixed(0)}, the rest ${median(measured.map((s) => s.us - s.sync - s.calls)).toFixed(0)}`)
  console.log(`the slow ones (µs in all / in the sync / in other calls, position in round): ${slow.map((s) => `${s.us.toFixed(0)}/${s.sync.toFixed(0)}/${s.calls.toFixed(0)}@${s.position}`).join(" ")}`)
} finally {
  await runtime.dispose()
  closeSync(fd)
  rmSync(root, { recursive: true, force: true })
}
