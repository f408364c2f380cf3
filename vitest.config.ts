import { availableParallelism, tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { BaseSequencer, type TestSpecification } from "vitest/node"
import { defineConfig } from "vitest/config"

const src = (path: string) => fileURLToPath(new URL(`./src/${path}`, import.meta.url))
// Lets the provider packages' betas load on effect 4.1 (see the file); it maps only their paths.
const providerShim = fileURLToPath(new URL("./test/support/providerShim/register.ts", import.meta.url))

// The processes the tests spawn (the CLI from source, the crash tests' appender) and the workers reuse
// the code Node compiled in earlier runs instead of compiling every module again: Node's compile cache,
// in the directory the `todo-write` bin uses by default.
process.env.NODE_COMPILE_CACHE ??= join(tmpdir(), "node-compile-cache")

/**
 * Vitest's order (without earlier results, as on a fresh clone: larger files first), except that the
 * package test starts first: it is one long chain of processes (npm pack with its build, npm install,
 * tsc), so, started among the last, it alone would run on after every other file had finished.
 */
class PackageTestFirst extends BaseSequencer {
  override async sort(files: Array<TestSpecification>) {
    const sorted = await super.sort(files)
    const first = (spec: TestSpecification) => spec.moduleId.endsWith("/test/package.test.ts")
    return [...sorted.filter(first), ...sorted.filter((spec) => !first(spec))]
  }
}

export default defineConfig({
  resolve: {
    // The package imports itself by name in examples (scratch/), as a user would, through the
    // entry points its package.json exports.
    alias: [
      { find: /^effect-todo-write$/, replacement: src("index.ts") },
      { find: /^effect-todo-write\/file$/, replacement: src("log/file/index.ts") },
      { find: /^effect-todo-write\/sql$/, replacement: src("log/sql/index.ts") },
      { find: /^effect-todo-write\/mcp$/, replacement: src("mcp/index.ts") }
    ]
  },
  test: {
    include: ["test/**/*.test.ts"],
    // The programs tests run as processes, bundled once (test/support/Executables.ts).
    globalSetup: ["test/support/bundleSetup.ts"],
    testTimeout: 30_000,
    // Vitest's default is one worker on a 2-core machine (cores - 1), so files ran one after another;
    // most of the slow ones wait on child processes, fsync or npm, so a worker more than the cores
    // keeps both busy.
    maxWorkers: availableParallelism() + 1,
    sequence: { sequencer: PackageTestFirst },
    // A worker runs file after file instead of starting afresh for each (~0.6 s each): the test files
    // share no state through modules (shared helpers clean up per test, not per module).
    isolate: false,
    // Memory tests measure what is retained, after a collection, not garbage yet to be collected.
    execArgv: ["--expose-gc", "--import", providerShim]
  }
})
