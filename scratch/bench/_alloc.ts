import { Session } from "node:inspector/promises"
import { NodeServices } from "@effect/platform-node"
import { Effect, Layer, ManagedRuntime } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { join } from "node:path"
import { CheckedSessionLog } from "../../src/log/CheckedSessionLog.ts"
import * as SessionLogFile from "../../src/log/file/SessionLogFile.ts"
import * as SessionId from "../../src/log/SessionId.ts"
import * as TodoEvents from "../../src/todo/TodoEvents.ts"
const payload = { todos: Array.from({ length: 10 }, (_, i) => ({ content: `Step ${i}: change the parser`, status: i === 0 ? "in_progress" : "pending" })) }
const root = mkdtempSync("/dev/shm/alloc-")
const sessions = Number(process.argv[2] ?? 1)
const ids = Array.from({ length: sessions }, (_, i) => SessionId.decodeSync(`s${i}`))
const runtime = ManagedRuntime.make(TodoEvents.layerChecked.pipe(Layer.provide(SessionLogFile.layerFileSystem({ directory: join(root, "log"), journal: true })), Layer.provide(NodeServices.layer)))
const n = Math.ceil(20000 / sessions)
const round = Effect.flatMap(CheckedSessionLog, (log) => Effect.forEach(ids, (id) => Effect.gen(function*() { for (let i = 0; i < n; i++) yield* log.append(id, "todo/write", payload) }), { concurrency: "unbounded", discard: true }))
try {
  await runtime.runPromise(round)
  const s = new Session(); s.connect()
  await s.post("HeapProfiler.startSampling", { samplingInterval: 1024, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true })
  await runtime.runPromise(round)
  const { profile } = await s.post("HeapProfiler.stopSampling")
  const self = new Map<string, number>(); let total = 0
  const walk = (node: any) => { const cf = node.callFrame; const key = `${cf.functionName || "(anon)"} ${cf.url.replace(/.*\/(node_modules\/)?/, "")}:${cf.lineNumber + 1}`; const sz = node.selfSize; total += sz; self.set(key, (self.get(key) ?? 0) + sz); for (const c of node.children) walk(c) }
  walk(profile.head)
  console.log("bytes per append", (total / (n * sessions)).toFixed(0))
  for (const [k, v] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 30)) console.log((v / (n * sessions)).toFixed(0).padStart(6), k)
} finally { await runtime.dispose(); rmSync(root, { recursive: true, force: true }) }
