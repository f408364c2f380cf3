#!/usr/bin/env node
/**
 * The `todo-write` executable: the one place that runs an Effect program (`Main.ts`). It first turns
 * on Node's on-disk compile cache, so that a start after the first reuses the compiled code of the
 * modules it loads instead of compiling them again; `Main.ts` and everything it imports come after.
 * The package's executable is this file bundled (`rolldown.config.ts`), `Main.ts` a chunk of its own.
 */
import * as Module from "node:module"

// No directory given: `NODE_COMPILE_CACHE` if set, else Node's own under the OS temporary directory,
// never the package's, which may be read-only. Failing to open it only means compiling as before.
// `NODE_DISABLE_COMPILE_CACHE=1` turns it off.
Module.enableCompileCache()

await import("./Main.ts")
