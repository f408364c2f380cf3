/**
 * Vitest's global setup: bundles the programs the tests run as processes — the `todo-write`
 * executable from `src/cli/bin.ts` and the crash tests' appenders — once per run, as the package's
 * own bin is bundled (`rolldown.config.ts`, minified alike). Each process then loads a few chunks instead of
 * resolving and type-stripping a few hundred modules: about 0.3 s of CPU per start instead of 0.8
 * (1.7 for an appender), across some 70 processes. `Executables.ts` names the files.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { build } from "rolldown"
import type { TestProject } from "vitest/node"
import { minify } from "../../rolldown.config.ts"

declare module "vitest" {
  export interface ProvidedContext {
    /** The directory holding the bundled executables. */
    readonly executables: string
  }
}

const source = (path: string) => new URL(`../../${path}`, import.meta.url).pathname

export default async function setup(project: TestProject) {
  const dir = mkdtempSync(join(tmpdir(), "todo-write-executables-"))
  await build({
    input: {
      "todo-write": source("src/cli/bin.ts"),
      appender: source("test/fixtures/appender.ts"),
      "sql-appender": source("test/fixtures/sql-appender.ts"),
      "io-thread-idle": source("test/fixtures/io-thread-idle.ts")
    },
    platform: "node",
    logLevel: "warn",
    output: { dir, format: "esm", chunkFileNames: "[name]-[hash].js", minify }
  })
  project.provide("executables", dir)
  return () => rmSync(dir, { recursive: true, force: true })
}
