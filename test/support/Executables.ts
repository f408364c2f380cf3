/**
 * The programs tests run as real processes, bundled from the sources once per run by
 * `bundleSetup.ts`: the `todo-write` executable (`src/cli/bin.ts`) and the appender fixtures.
 */
import { join } from "node:path"
import { inject } from "vitest"

const dir = inject("executables")

/** `todo-write`, from `src/cli/bin.ts`. */
export const bin = join(dir, "todo-write.js")

/** `test/fixtures/appender.ts`: appends to file sessions until killed. */
export const appender = join(dir, "appender.js")

/** `test/fixtures/sql-appender.ts`: appends to a PostgreSQL session. */
export const sqlAppender = join(dir, "sql-appender.js")

/** `test/fixtures/io-thread-idle.ts`: commits a batch through a journal I/O thread and leaves it idle. */
export const ioThreadIdle = join(dir, "io-thread-idle.js")
