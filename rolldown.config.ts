/**
 * The `todo-write` executable as one bundle (`npm run build`, after `tsc`): a start that loads a few
 * files instead of resolving and reading some 260 modules one by one, which was most of its time.
 * Commands stay lazy: each is a chunk loaded when it runs. `@effect/sql-pg` (a client written in
 * TypeScript over Node's sockets, no native driver) is bundled too, so `--store postgres` works without
 * installing it and the executable holds one copy of `effect`. The library's entry points are not
 * bundled: they are `tsc`'s modules, sharing the user's `effect` and, for `/sql`, its `@effect/sql-pg`.
 */
import { defineConfig } from "rolldown"

export default defineConfig({
  input: { "todo-write": "dist/cli/bin.js" },
  platform: "node",
  output: {
    dir: "dist/bin",
    format: "esm",
    entryFileNames: "[name].js",
    chunkFileNames: "[name]-[hash].js"
  }
})
