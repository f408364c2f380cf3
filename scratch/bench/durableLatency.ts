/**
 * `npx node --expose-gc scratch/bench/durableLatency.ts [runs]`: only the one-session latency part of
 * `durableAppend`, `runs` times (default 3), each run's p50 ratios on one line: for tuning the lone
 * append without waiting for the throughput rounds.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { join } from "node:path"
import { latency } from "./durableAppend.ts"

const runs = Number(process.argv[2] ?? 3)
for (let run = 0; run < runs; run++) {
  const root = mkdtempSync(join(process.cwd(), ".bench-"))
  try {
    const cells: Array<string> = []
    for (const journal of [false, true]) {
      const [vsBare, vsLite] = await latency(root, journal)
      cells.push(
        `${journal ? "journal" : "file"}: ${vsBare!.target.toFixed(0)} µs, ${vsBare!.ratio.toFixed(2)}× write+fsync (${
          vsBare!.baseline.toFixed(0)
        }), ${vsLite!.ratio.toFixed(2)}× SQLite (${vsLite!.baseline.toFixed(0)})`
      )
    }
    console.log(cells.join(" | "))
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
}
