// The project's vitest config with isolation off, for mutation runs only: each mutant run then
// reuses one worker and its module cache instead of starting a process and re-importing effect
// per test file, which is most of a run's cost. Mutants are switched at run time (the source
// is instrumented once), so sharing modules between runs changes nothing but static mutants,
// which the config ignores anyway. No global setup: the executables it bundles are for the tests
// that spawn processes, which mutation runs leave out (a child process never runs the mutant), and
// Stryker restarts its runners without vitest's teardown, which left a bundle behind each time.
import { fileURLToPath } from "node:url"
import { defineConfig } from "vitest/config"
import base from "../../vitest.config.ts"

export default defineConfig({
  ...base,
  root: fileURLToPath(new URL("../..", import.meta.url)),
  test: { ...base.test, isolate: false, globalSetup: [] }
})
