// Summarises a StrykerJS JSON report: counts by status, and every mutant that wasn't killed, with
// its line, mutator and replacement, for the README's tables.
import { readFileSync } from "node:fs"

const report = JSON.parse(readFileSync(process.argv[2], "utf8"))
for (const [file, { mutants, source }] of Object.entries(report.files)) {
  const lines = source.split("\n")
  const counts = {}
  for (const m of mutants) counts[m.status] = (counts[m.status] ?? 0) + 1
  const detected = (counts.Killed ?? 0) + (counts.Timeout ?? 0)
  const valid = detected + (counts.Survived ?? 0) + (counts.NoCoverage ?? 0)
  console.log(`${file}: ${JSON.stringify(counts)}; score ${(100 * detected / valid).toFixed(2)} %`)
  for (const m of mutants.filter((m) => !["Killed", "Timeout", "Ignored", "CompileError"].includes(m.status))) {
    const { line, column } = m.location.start
    console.log(`- ${m.status} L${line}:${column} ${m.mutatorName}: ${JSON.stringify(m.replacement ?? "")}`)
    console.log(`    ${lines[line - 1].trim().slice(0, 160)}`)
  }
}
