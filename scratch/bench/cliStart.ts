/**
 * 8. CLI start: how long `todo-write schema` and `todo-write show <session> --dir <dir>` take, start to
 * exit, from the installed package (`npm pack`, installed once into an empty project, as a user gets
 * it), against `node -e 0` in the same run. The goal is absolute: each command ≤ 300 ms. The children
 * get a compile cache of their own (`NODE_COMPILE_CACHE`), so the first run is a cold start and the
 * rounds after it are warm ones, as a user's second run is.
 */
import { execFileSync, spawnSync } from "node:child_process"
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { delimiter, dirname, join } from "node:path"
import { type Comparison, compare } from "./harness.ts"

const root = new URL("../..", import.meta.url).pathname
const goalMs = 300
const rounds = 15

/** Packs the package and installs it into an empty project; answers the installed bin's path. */
const install = (work: string): string => {
  // The pinned Node first on PATH, as npm scripts have it (for npm's own scripts: prepack builds dist).
  const env = { ...process.env, PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH}` }
  const run = (command: string, args: ReadonlyArray<string>, cwd: string) =>
    execFileSync(command, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"], timeout: 240_000 })
  run("npm", ["pack", "--pack-destination", work], root)
  const tarball = readdirSync(work).find((name) => name.endsWith(".tgz"))!
  const project = join(work, "consumer")
  mkdirSync(project)
  writeFileSync(join(project, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }))
  run("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", join(work, tarball)], project)
  // The bin package.json names (the bundle), not a path of its own, so the benchmark times what users run.
  const installed = join(project, "node_modules/effect-todo-write")
  const manifest = JSON.parse(readFileSync(join(installed, "package.json"), "utf8")) as { bin: Record<string, string> }
  return join(installed, manifest.bin["todo-write"]!)
}

export const run = async (): Promise<ReadonlyArray<Comparison>> => {
  const work = mkdtempSync(join(tmpdir(), "todo-write-bench-cli-"))
  try {
    const bin = install(work)
    const env = { ...process.env, NODE_COMPILE_CACHE: join(work, "compile-cache") }
    /** Runs node with these arguments to its exit; answers the wall time in ms. */
    const time = (args: ReadonlyArray<string>): number => {
      const start = process.hrtime.bigint()
      const result = spawnSync(process.execPath, args, { env, stdio: ["ignore", "pipe", "pipe"], encoding: "utf8" })
      const ms = Number(process.hrtime.bigint() - start) / 1e6
      if (result.status !== 0) throw new Error(`node ${args.join(" ")} exited ${result.status}: ${result.stderr}`)
      return ms
    }
    const schema = [bin, "schema"]
    const coldSchema = time(schema)
    const sessions = join(work, "sessions")
    time([bin, "demo", "--dir", sessions])
    const session = readdirSync(sessions).find((name) => name.endsWith(".jsonl"))!.slice(0, -".jsonl".length)
    const show = [bin, "show", session, "--dir", sessions]
    const baseline = async () => time(["-e", "0"]) * 1000
    const one = async (name: string, args: ReadonlyArray<string>, cold?: number) => {
      const result = await compare({ name, rounds, target: async () => time(args) * 1000, baseline })
      const ms = result.target / 1000
      return {
        ...result,
        note: `${ms.toFixed(0)} ms absolute, ${(ms - result.baseline / 1000).toFixed(0)} ms over node -e 0: ` +
          (ms <= goalMs ? `ok (≤ ${goalMs} ms)` : `MISS (goal ≤ ${goalMs} ms)`) +
          (cold === undefined ? "" : `; first run (cold compile cache) ${cold.toFixed(0)} ms`)
      }
    }
    return [
      await one("CLI start: todo-write schema", schema, coldSchema),
      await one("CLI start: todo-write show <session>", show)
    ]
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
}
