/**
 * The store a live view reads: the checked log of `Store`, watching a session directory for other
 * processes' commits (PostgreSQL carries them already, by `LISTEN`), and a projection store over it.
 */
import { type FileSystem, Layer, type Path } from "effect"
import type { CliError } from "effect/cli"
import type { CheckedSessionLog } from "../log/CheckedSessionLog.ts"
import type { SessionLogError } from "../log/SessionLogError.ts"
import * as ProjectionStore from "../projection/ProjectionStore.ts"
import * as Store from "./Store.ts"

/** The checked log and a projection store over it, carrying every process's commits. */
export const layer = (
  kind: Store.Store,
  dir: string
): Layer.Layer<
  CheckedSessionLog | ProjectionStore.ProjectionStore,
  SessionLogError | CliError.UserError,
  FileSystem.FileSystem | Path.Path
> =>
  ProjectionStore.layer.pipe(Layer.provideMerge(Store.log(kind, dir, { watch: true })))
