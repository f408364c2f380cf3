/**
 * A probe: the CPU of one lone append, sequential, one session, layer by layer: through the checked
 * log (the todo invariants) or the raw one, over the in-memory backend or the file backend on a tmpfs
 * (`/dev/shm`, where fsync is free). The differences say what each layer costs.
 * `npx node --expose-gc scratch/bench/experiments/loneLayers.ts [appends]`.
 */
import { NodeServices } from "@effect/platform-node"
import { Effect, Layer, ManagedRuntime } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { join } from "node:path"
import { CheckedSessionLog } from "../../../src/log/CheckedSessionLog.ts"
import * as SessionLogFile from "../../../src/log/file/SessionLogFile.ts"
import * as SessionId from "../../../src/log/SessionId.ts"
import * as SessionLog from "../../../src/log/SessionLog.ts"
import * as TodoEvents from "../../../src/todo/TodoEvents.ts"
import { todoWritePayload as payload } from "../fixtures.ts"

const n = Number(process.argv[2] ?? 20000)
const root = mkdtempSync("/dev/shm/layers-")
const id = SessionId.decodeSync("lone")
const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!

const cpuPerAppend = async (label: string, backend: Layer.Layer<SessionLog.SessionLog, unknown>, checked: boolean) => {
  const runtime = ManagedRuntime.make(Layer.merge(TodoEvents.layerChecked.pipe(Layer.provide(backend)), backend))
  const append = checked
    ? Effect.map(CheckedSessionLog, (log) => () => log.append(id, "todo/write", payload))
    : Effect.map(SessionLog.SessionLog, (log) => () => log.append(id, "todo/write", payload))
  const round = Effect.gen(function*() {
    const one = yield* append
    const c0 = process.threadCpuUsage()
    for (let i = 0; i < n / 10; i++) yield* one()
    const c = process.threadCpuUsage(c0)
    return (c.user + c.system) / (n / 10)
  })
  const rounds: Array<number> = []
  await runtime.runPromise(round)
  for (let r = 0; r < 10; r++) {
    globalThis.gc?.()
    rounds.push(await runtime.runPromise(round))
  }
  await runtime.dispose()
  console.log(`${label}: ${median(rounds).toFixed(1)} µs CPU per append (min ${Math.min(...rounds).toFixed(1)})`)
}

try {
  const file = (name: string, journal: boolean) =>
    SessionLogFile.layerFileSystem({ directory: join(root, name), journal }).pipe(Layer.provide(NodeServices.layer))
  await cpuPerAppend("memory, raw", SessionLog.layerMemory, false)
  await cpuPerAppend("memory, checked", SessionLog.layerMemory, true)
  await cpuPerAppend("file, raw", file("raw", false), false)
  await cpuPerAppend("file, checked", file("checked", false), true)
  await cpuPerAppend("journal, raw", file("jraw", true), false)
  await cpuPerAppend("journal, checked", file("jchecked", true), true)
} finally {
  rmSync(root, { recursive: true, force: true })
}
