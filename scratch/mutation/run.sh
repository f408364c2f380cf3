#!/usr/bin/env bash
# One module's mutation run, cheap enough for a shared 2-core machine: only the given test files,
# vitest without isolation (scratch/mutation/vitest.config.ts), no TypeScript checker (uncompilable
# mutants then fail at run time, or survive and are read by hand), incremental (a re-run after new
# tests runs only what changed). Usage:
#   bash scratch/mutation/run.sh <name> <file to mutate>[,<file>...] <test file>[,<test file>...]
# Its config, log and report are kept in scratch/mutation/reports/ as <name>.*; survivors.mjs
# lists what the report found.
set -euo pipefail
name=$1 mutate=$2 tests=$3
reports=scratch/mutation/reports
mkdir -p "$reports"
npx node -e '
const [name, mutate, tests, reports] = process.argv.slice(1)
const config = JSON.parse(require("node:fs").readFileSync("stryker.config.json", "utf8"))
delete config.$schema
Object.assign(config, {
  mutate: mutate.split(","),
  testFiles: tests.split(","),
  checkers: [],
  // A hung mutant costs this much on top of the run time; the default 60 s adds up on a slow machine.
  timeoutMS: 15000,
  concurrency: Number(process.env.CONCURRENCY ?? 2),
  incremental: true,
  incrementalFile: `${reports}/${name}.incremental.json`,
  reporters: ["clear-text", "json", "progress-append-only"],
  jsonReporter: { fileName: `${reports}/${name}.json` },
  vitest: { ...config.vitest, configFile: "scratch/mutation/vitest.config.ts" }
})
require("node:fs").writeFileSync(`${reports}/${name}.config.json`, JSON.stringify(config, null, 2))
' "$name" "$mutate" "$tests" "$reports"
npx stryker run "$reports/$name.config.json"
npx node scratch/mutation/survivors.mjs "$reports/$name.json"
