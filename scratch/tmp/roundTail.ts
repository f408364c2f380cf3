import { NodeServices } from "@effect/platform-node"
import { Effect, Layer, ManagedRuntime } from "effect"
import { fsyncSync, mkdirSync, mkdtempSync, openSync, readdirSync, rmSync, statSync, writeSync } from "node:fs"
import { DatabaseSync } from "node:sqlite"
import { join } from "node:path"
import { CheckedSessionLog } from "../../src/log/CheckedSessionLog.ts"
import * as SessionFile from "../../src/log/file/Format.ts"
import * as SessionLogFile from "../../src/log/file/SessionLogFile.ts"
import * as SessionId from "../../src/log/SessionId.ts"
import * as TodoEvents from "../../src/todo/TodoEvents.ts"
import { todoWritePayload as payload } from "../bench/fixtures.ts"
const json = JSON.stringify(payload)
const root = mkdtempSync(join(process.cwd(), ".tail-"))
const dir = join(root, "log")
const runtime = ManagedRuntime.make(TodoEvents.layerChecked.pipe(Layer.provide(SessionLogFile.layerFileSystem({ directory: dir, journal: process.argv[2] !== "file" })), Layer.provide(NodeServices.layer)))
const id = SessionId.decodeSync("lone")
mkdirSync(join(root, "b")); const fd = openSync(join(root, "b", "x.jsonl"), "a")
const db = new DatabaseSync(join(root, "l.sqlite")); db.exec("PRAGMA journal_mode=WAL"); db.exec("PRAGMA synchronous=FULL"); db.exec("CREATE TABLE e (s TEXT, q INTEGER, d TEXT)"); const ins = db.prepare("INSERT INTO e VALUES (?, ?, ?)")
let seq = 0
const rec: Array<{ round: number; i: number; us: number; size: number }> = []
const journalSize = () => { const j = readdirSync(dir).find((f) => f.endsWith(".wal")); return j ? statSync(join(dir, j)).size : -1 }
for (let round = 0; round < 160; round++) {
  const order = [
    () => runtime.runPromise(Effect.gen(function*() { const log = yield* CheckedSessionLog; for (let i = 0; i < 25; i++) { const t0 = process.hrtime.bigint(); yield* log.append(id, "todo/write", payload); rec.push({ round, i, us: Number(process.hrtime.bigint() - t0) / 1000, size: 0 }) } })),
    async () => { for (let i = 0; i < 25; i++) { writeSync(fd, SessionFile.entryLine("todo/write", seq++, 0, json)); fsyncSync(fd) } },
    async () => { for (let i = 0; i < 25; i++) ins.run("lone", seq++, json) }
  ]
  for (let k = 0; k < 3; k++) await order[(round + k) % 3]!()
  rec[rec.length - 1]!.size = journalSize()
}
const warm = rec.filter((r) => r.round >= 80)
const sorted = warm.map((r) => r.us).sort((a, b) => a - b)
const p50 = sorted[sorted.length >> 1]!, p99 = sorted[Math.floor(sorted.length * 0.99)]!
console.log(`p50 ${p50.toFixed(0)} p99 ${p99.toFixed(0)} (${(p99 / p50).toFixed(1)}x); first-of-round p50 ${[...warm.filter((r) => r.i === 0).map((r) => r.us)].sort((a, b) => a - b)[40]!.toFixed(0)}`)
console.log("slow >= p99:", warm.filter((r) => r.us >= p99).map((r) => `r${r.round}i${r.i}:${r.us.toFixed(0)}`).join(" "))
console.log("journal size at round ends:", [...new Set(rec.filter((r) => r.size).map((r) => `${r.round}:${r.size}`))].filter((_, k, a) => k === 0 || a[k - 1]!.split(":")[1] !== _.split(":")[1]).join(" "))
await runtime.dispose(); rmSync(root, { recursive: true })
