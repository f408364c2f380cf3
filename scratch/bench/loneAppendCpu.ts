/**
 * A probe, not a benchmark with a goal: the CPU of one lone checked append through `SessionLogFile`,
 * measured (main thread CPU time, `process.threadCpuUsage`) on a tmpfs (`/dev/shm`, where fsync is free), in both modes, against a bare `writeSync` +
 * `fsyncSync` of the same line there. Run with `npx node --expose-gc scratch/bench/loneAppendCpu.ts
 * [appends]`; add `--cpu-prof` to profile it.
 */
import { NodeServices } from "@effect/platform-node"
import { Effect, Layer, ManagedRuntime } from "effect"
import { closeSync, fsyncSync, mkdtempSync, openSync, rmSync, writeSync } from "node:fs"
import { join } from "node:path"
import { CheckedSessionLog } from "../../src/log/CheckedSessionLog.ts"
import * as SessionFile from "../../src/log/file/Format.ts"
import * as SessionLogFile from "../../src/log/file/SessionLogFile.ts"
import * as SessionId from "../../src/log/SessionId.ts"
import * as TodoEvents from "../../src/todo/TodoEvents.ts"
import { median } from "./harness.ts"
import { todoWritePayload as payload } from "./fixtures.ts"

const json = JSON.stringify(payload)
const n = Number(process.argv[2] ?? 20000)
const rounds = 10
const root = mkdtempSync("/dev/shm/lone-")
const id = SessionId.decodeSync("lone")

const measure = async (journal: boolean) => {
  const runtime = ManagedRuntime.make(
    TodoEvents.layerChecked.pipe(
      Layer.provide(SessionLogFile.layerFileSystem({ directory: join(root, `log-${journal}`), journal })),
      Layer.provide(NodeServices.layer)
    )
  )
  const fd = openSync(join(root, `bare-${journal}.jsonl`), "a")
  let seq = 0
  const perRound = Math.ceil(n / rounds)
  const round = Effect.gen(function*() {
    const log = yield* CheckedSessionLog
    const c0 = process.threadCpuUsage()
    for (let i = 0; i < perRound; i++) yield* log.append(id, "todo/write", payload)
    const c = process.threadCpuUsage(c0)
    return (c.user + c.system) / perRound
  })
  const bare = () => {
    const c0 = process.threadCpuUsage()
    for (let i = 0; i < perRound; i++) {
      writeSync(fd, SessionFile.entryLine("todo/write", seq++, 0, json))
      fsyncSync(fd)
    }
    const c = process.threadCpuUsage(c0)
    return (c.user + c.system) / perRound
  }
  const targets: Array<number> = []
  const bares: Array<number> = []
  try {
    await runtime.runPromise(round)
    bare()
    for (let r = 0; r < rounds; r++) {
      globalThis.gc?.()
      targets.push(await runtime.runPromise(round))
      globalThis.gc?.()
      bares.push(bare())
    }
  } finally {
    await runtime.dispose()
    closeSync(fd)
  }
  const t = median(targets)
  const b = median(bares)
  console.log(
    `${journal ? "journal" : "fsync per file"}: lone append ${t.toFixed(1)} µs CPU (min ${Math.min(...targets).toFixed(1)}), bare write+fsync ${
      b.toFixed(1)
    } µs (min ${Math.min(...bares).toFixed(1)}), extra ${(t - b).toFixed(1)} µs (min-min ${(Math.min(...targets) - Math.min(...bares)).toFixed(1)})`
  )
}

try {
  const only = process.argv[3]
  if (only !== "journal") await measure(false)
  if (only !== "file") await measure(true)
} finally {
  rmSync(root, { recursive: true, force: true })
}
