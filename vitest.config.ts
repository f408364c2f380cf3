import { fileURLToPath } from "node:url"
import { defineConfig } from "vitest/config"

export default defineConfig({
  resolve: {
    // The package imports itself by name in examples (scratch/), as a user would.
    alias: { "effect-todo-write": fileURLToPath(new URL("./src/index.ts", import.meta.url)) }
  },
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    // Memory tests measure what is retained, after a collection, not garbage yet to be collected.
    execArgv: ["--expose-gc"]
  }
})
