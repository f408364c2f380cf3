/**
 * `npm run bench [-- --json] [-- name…]`: runs the benchmarks and prints each figure as a ratio
 * against its baseline from the same run.
 */
import { type Comparison, verdict } from "./harness.ts"
import * as ModelSize from "./modelSize.ts"

const benchmarks: Record<string, () => Promise<ReadonlyArray<Comparison>>> = {
  toolCall: async () => (await import("./toolCall.ts")).run(),
  replay: async () => (await import("./replay.ts")).run(),
  reopen: async () => (await import("./reopen.ts")).run(),
  projectionRead: async () => (await import("./projectionRead.ts")).run(),
  durableAppend: async () => (await import("./durableAppend.ts")).run(),
  modelSize: async () => []
}

const args = process.argv.slice(2)
const json = args.includes("--json")
const selected = args.filter((a) => !a.startsWith("--"))
const names = selected.length > 0 ? selected : Object.keys(benchmarks)

const sizes = names.includes("modelSize") ? ModelSize.run() : []
const results: Array<Comparison> = []
for (const name of names.filter((n) => n !== "modelSize")) {
  const bench = benchmarks[name]
  if (bench === undefined) {
    console.error(`unknown benchmark ${name}; known: ${Object.keys(benchmarks).join(", ")}`)
    process.exit(2)
  }
  if (!json) console.error(`running ${name}…`)
  results.push(...(await bench()))
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
