/**
 * `npm run bench [-- --json] [-- name…]`: runs the benchmarks and prints each figure as a ratio
 * against its baseline from the same run. Each benchmark runs in a process of its own, so that one
 * benchmark's garbage and JIT state don't weigh on the next.
 */
import { execFileSync } from "node:child_process"
import { fileURLToPath } from "node:url"
import { type Comparison, verdict } from "./harness.ts"
import * as ModelSize from "./modelSize.ts"

const benchmarks: Record<string, () => Promise<ReadonlyArray<Comparison>>> = {
  toolCall: async () => (await import("./toolCall.ts")).run(),
  replay: async () => (await import("./replay.ts")).run(),
  reopen: async () => (await import("./reopen.ts")).run(),
  projectionRead: async () => (await import("./projectionRead.ts")).run(),
  durableAppend: async () => (await import("./durableAppend.ts")).run(),
  retainedHeap: async () => (await import("./retainedHeap.ts")).run(),
  httpServe: async () => (await import("./httpServe.ts")).run(),
  cliStart: async () => (await import("./cliStart.ts")).run(),
  sqlAppend: async () => (await import("./sqlAppend.ts")).run(),
  modelSize: async () => []
}

const args = process.argv.slice(2)
const json = args.includes("--json")
const selected = args.filter((a) => !a.startsWith("--"))
const names = selected.length > 0 ? selected : Object.keys(benchmarks)

if (args.includes("--child")) {
  // One benchmark, in this process: its results as JSON on stdout.
  const name = selected[0]!
  console.log(JSON.stringify(await benchmarks[name]!()))
  process.exit(0)
}

const runChild = (name: string): ReadonlyArray<Comparison> =>
  JSON.parse(
    execFileSync(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), "--child", name], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "inherit"],
      maxBuffer: 16 * 1024 * 1024
    })
  )

const sizes = names.includes("modelSize") ? ModelSize.run() : []
const results: Array<Comparison> = []
for (const name of names.filter((n) => n !== "modelSize")) {
  const bench = benchmarks[name]
  if (bench === undefined) {
    console.error(`unknown benchmark ${name}; known: ${Object.keys(benchmarks).join(", ")}`)
    process.exit(2)
  }
  if (!json) console.error(`running ${name}…`)
  results.push(...runChild(name))
}

if (json) {
  console.log(JSON.stringify({ node: process.version, results, sizes }, null, 2))
} else {
  const rows = results.map((r) => [
    r.name,
    r.target.toFixed(2),
    r.baseline.toFixed(2),
    `${r.ratio.toFixed(2)}×`,
    verdict(r),
    r.note ?? ""
  ])
  const header = ["benchmark", "target µs/op", "baseline µs/op", "ratio", "goal", "note"]
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)))
  const line = (cells: ReadonlyArray<string>) => cells.map((c, i) => c.padEnd(widths[i]!)).join("  ").trimEnd()
  console.log([line(header), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)].join("\n"))
  if (sizes.length > 0) {
    const sizeRows = sizes.map((s) => [
      s.name,
      String(s.tokens),
      s.goal === undefined ? "" : s.tokens <= s.goal.max ? `ok (≤ ${s.goal.max})` : `MISS (target ≤ ${s.goal.max})`,
      s.note ?? ""
    ])
    const sizeHeader = ["model-facing size", "o200k tokens", "goal", "note"]
    const w = sizeHeader.map((h, i) => Math.max(h.length, ...sizeRows.map((row) => row[i]!.length)))
    const l = (cells: ReadonlyArray<string>) => cells.map((c, i) => c.padEnd(w[i]!)).join("  ").trimEnd()
    console.log(["", l(sizeHeader), l(w.map((n) => "-".repeat(n))), ...sizeRows.map(l)].join("\n"))
  }
}
