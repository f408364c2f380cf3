/**
 * The `todo-write` executable as one bundle (`npm run build`, after `tsc`): a start that loads a few
 * files instead of resolving and reading some 260 modules one by one, which was most of its time.
 * Commands stay lazy: each is a chunk loaded when it runs. `@effect/sql-pg` (a client written in
 * TypeScript over Node's sockets, no native driver) is bundled too, so `--store postgres` works without
 * installing it and the executable holds one copy of `effect`. The library's entry points are not
 * bundled: they are `tsc`'s modules, sharing the user's `effect` and, for `/sql`, its `@effect/sql-pg`.
 */
import { defineConfig } from "rolldown"

/**
 * Minified, as every start reads, decodes and parses what it loads: without comments and whitespace,
 * with dead code dropped, `todo-write schema` starts ~20 ms sooner (of ~140 ms over `node -e 0`).
 * Names are kept (no mangling, worth ~10 ms more), so a stack trace still names its functions.
 * The tests' bundles (`test/support/bundleSetup.ts`) use the same.
 */
export const minify = { compress: true, mangle: false } as const

export default defineConfig({
  input: { "todo-write": "dist/cli/bin.js" },
  platform: "node",
  output: {
    dir: "dist/bin",
    format: "esm",
    entryFileNames: "[name].js",
    chunkFileNames: "[name]-[hash].js",
    // A build replaces the last one: no chunk of an earlier build is left to be packed.
    cleanDir: true,
    minify
  }
})
