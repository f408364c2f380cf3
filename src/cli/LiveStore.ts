/**
 * The store a live view reads: the checked log of `Store`, watching a session directory for other
 * processes' commits (PostgreSQL carries them already, by `LISTEN`), and a projection store over it.
 */
import type * as CliError from "effect/cli/CliError"
import type * as FileSystem from "effect/FileSystem"
import * as Layer from "effect/Layer"
import type * as Path from "effect/Path"
import type { CheckedSessionLog } from "../log/CheckedSessionLog.ts"
import type { SessionLogError } from "../log/SessionLogError.ts"
import * as ProjectionStore from "../projection/ProjectionStore.ts"
import type * as Flags from "./Flags.ts"
import * as Store from "./Store.ts"

/** The checked log and a projection store over it, carrying every process's commits. */
export const layer = (
  kind: Flags.Store,
  dir: string
): Layer.Layer<
  CheckedSessionLog | ProjectionStore.ProjectionStore,
  SessionLogError | CliError.UserError,
  FileSystem.FileSystem | Path.Path
> =>
  ProjectionStore.layer.pipe(Layer.provideMerge(Store.log(kind, dir, { watch: true })))
