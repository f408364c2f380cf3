/**
 * A probe: one session appending one event at a time through `SessionLogFile`, checked as the tool uses
 * it, with Node's synchronous file calls wrapped (before the log is loaded) so that each is timed in
 * place, and so is the time between them: what of a lone append is system calls, and where the rest
 * goes (before the first call: the invariant, the payload's snapshot and JSON, the core's lane and the
 * hop to the ready fibers; between the lock's `lstat` and the write: the lines and their checksums;
 * after the last call: the answer back to the caller).
 * Run: `npx node scratch/bench/experiments/loneTimedCalls.ts [directory-root] [file|journal] [appends]`
 * (default `/dev/shm`, where the calls cost the least and the rest shows most).
 */
import fs from "node:fs"
import { syncBuiltinESMExports } from "node:module"

type Wrapped = "lstatSync" | "writeSync" | "fsyncSync" | "fdatasyncSync" | "readlinkSync" | "readSync"
const wrapped: ReadonlyArray<Wrapped> = ["lstatSync", "writeSync", "fsyncSync", "fdatasyncSync", "readlinkSync", "readSync"]
const totals = new Map<Wrapped, { calls: number; nanos: number }>()
// Each call's start and end, and each append's, while recording: the gaps between them.
const marks: Array<readonly [string, bigint]> = []
let recording = false

for (const name of wrapped) {
  const original = fs[name] as (...args: ReadonlyArray<unknown>) => unknown
  totals.set(name, { calls: 0, nanos: 0 })
  Object.assign(fs, {
    [name]: (...args: ReadonlyArray<unknown>) => {
      const t0 = process.hrtime.bigint()
      if (recording) marks.push([`${name}>`, t0])
      try {
        return original(...args)
      } finally {
        const t1 = process.hrtime.bigint()
        if (recording) marks.push([`<${name}`, t1])
        const total = totals.get(name)!
        total.calls++
        total.nanos += Number(t1 - t0)
      }
    }
  })
}
// The ES module bindings of `node:fs` follow: the log's `import { lstatSync } from "node:fs"` sees these.
syncBuiltinESMExports()

const { NodeServices } = await import("@effect/platform-node")
const { Effect, Layer, ManagedRuntime } = await import("effect")
const { CheckedSessionLog } = await import("../../../src/log/CheckedSessionLog.ts")
const SessionLogFile = await import("../../../src/log/file/SessionLogFile.ts")
const SessionId = await import("../../../src/log/SessionId.ts")
const TodoEvents = await import("../../../src/todo/TodoEvents.ts")

const { todoWritePayload: payload } = await import("../fixtures.ts")
const root = fs.mkdtempSync(`${process.argv[2] ?? "/dev/shm"}/lone-timed-`)
const journal = process.argv[3] === "journal"
const appends = Number(process.argv[4] ?? 20_000)
const id = SessionId.decodeSync("lone")
const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!
const runtime = ManagedRuntime.make(
  TodoEvents.layerChecked.pipe(
    Layer.provide(SessionLogFile.layerFileSystem({ directory: `${root}/log`, journal })),
    Layer.provide(NodeServices.layer)
  )
)
const loop = (count: number, marked: boolean) =>
  runtime.runPromise(Effect.gen(function*() {
    const log = yield* CheckedSessionLog
    for (let i = 0; i < count; i++) {
      if (marked) marks.push(["start", process.hrtime.bigint()])
      yield* log.append(id, "todo/write", payload)
      if (marked) marks.push(["end", process.hrtime.bigint()])
    }
  }))

try {
  // Warm: V8 optimizes the path over the first thousands of appends.
  await loop(5_000, false)
  for (const total of totals.values()) total.calls = total.nanos = 0
  const t0 = process.hrtime.bigint()
  await loop(appends, false)
  const wall = Number(process.hrtime.bigint() - t0) / 1000 / appends
  let inCalls = 0
  for (const [name, total] of totals) {
    if (total.calls === 0) continue
    console.log(`${name.padEnd(14)} ${(total.calls / appends).toFixed(2)} per append, ${(total.nanos / total.calls / 1000).toFixed(2)} µs each`)
    inCalls += total.nanos / 1000 / appends
  }
  // Means: in journal mode the writes' include the zeros written ahead now and then (64 KiB each); the medians below don't.
  console.log(`wall ${wall.toFixed(1)} µs per append (means): ${inCalls.toFixed(1)} in those calls, ${(wall - inCalls).toFixed(1)} around them`)
  recording = true
  await loop(2_000, true)
  recording = false
  const gaps = new Map<string, Array<number>>()
  for (let i = 1; i < marks.length; i++) {
    const [from, at] = marks[i - 1]!
    const [to, next] = marks[i]!
    if (from === "end" && to === "start") continue
    const key = `${from} .. ${to}`
    const gap = gaps.get(key) ?? []
    gap.push(Number(next - at) / 1000)
    gaps.set(key, gap)
  }
  console.log("between (median, mean µs; an event-loop turn every third append shows in the mean):")
  for (const [key, gap] of gaps) {
    if (gap.length < 1_000) continue
    console.log(`  ${key.padEnd(32)} ${median(gap).toFixed(2).padStart(6)} ${(gap.reduce((a, b) => a + b, 0) / gap.length).toFixed(2).padStart(6)}`)
  }
} finally {
  await runtime.dispose()
  fs.rmSync(root, { recursive: true, force: true })
}
