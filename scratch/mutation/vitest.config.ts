// The project's vitest config with isolation off, for mutation runs only: each mutant run then
// reuses one worker and its module cache instead of starting a process and re-importing effect
// per test file, which is most of a run's cost. Mutants are switched at run time (the source
// is instrumented once), so sharing modules between runs changes nothing but static mutants,
// which the config ignores anyway.
import { fileURLToPath } from "node:url"
import { defineConfig, mergeConfig } from "vitest/config"
import base from "../../vitest.config.ts"

export default mergeConfig(
  base,
  defineConfig({
    root: fileURLToPath(new URL("../..", import.meta.url)),
    test: { isolate: false }
  })
)
