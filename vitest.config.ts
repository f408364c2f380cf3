import { fileURLToPath } from "node:url"
import { defineConfig } from "vitest/config"

const src = (path: string) => fileURLToPath(new URL(`./src/${path}`, import.meta.url))
// Lets the provider packages' betas load on effect 4.1 (see the file); it maps only their paths.
const providerShim = fileURLToPath(new URL("./test/support/providerShim/register.ts", import.meta.url))

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
    testTimeout: 30_000,
    // Memory tests measure what is retained, after a collection, not garbage yet to be collected.
    execArgv: ["--expose-gc", "--import", providerShim]
  }
})
