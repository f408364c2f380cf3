/**
 * A foreign failure (a `PlatformError`, a driver's error) as a `StorageFailure` that says what
 * happened in plain words: "the disk is full (ENOSPC, write to /dir/s.jsonl)" rather than
 * "Unknown: FileSystem.writeAll (21)". The system error code decides the kind; the foreign error
 * itself stays the cause, for the operator's log.
 */
import * as Data from "effect/Data"
import * as PlatformError from "effect/PlatformError"
import * as SqlError from "effect/sql/SqlError"
import type { Failure } from "../SessionLog.ts"
import { SessionLogError, StorageFailure, type StorageFailureKind } from "../SessionLogError.ts"

const byCode: Record<string, readonly [StorageFailureKind, string]> = {
  ENOSPC: ["DiskFull", "the disk is full"],
  EROFS: ["ReadOnly", "the file system is read-only"],
  EACCES: ["PermissionDenied", "permission denied"],
  EPERM: ["PermissionDenied", "operation not permitted"],
  EDQUOT: ["QuotaExceeded", "the disk quota is exceeded"],
  EIO: ["IoError", "an I/O error: the device failed"],
  ENOENT: ["Unknown", "no such file or directory"],
  ENOTDIR: ["Unknown", "a part of the path is not a directory"],
  EMFILE: ["Unknown", "too many open files"],
  ENFILE: ["Unknown", "too many open files in the system"]
}

/** The system error code (`ENOSPC`…) a foreign error carries, if any. */
const codeOf = (cause: unknown): string | undefined =>
  typeof cause === "object" && cause !== null && "code" in cause && typeof cause.code === "string" ? cause.code : undefined

/**
 * A storage failure the log worded itself, adding what the foreign error can't say (that a failed
 * batch may still appear, see `maybeStored`): the log's error carries `reason`, and the foreign error
 * as its cause.
 */
export class Worded extends Data.TaggedError("WordedStorageFailure")<{
  readonly reason: StorageFailure
  readonly cause: unknown
  /** The reason's detail: what it says if ever printed as it is. */
  readonly message: string
}> {}

/** The failure's kind and plain description, with its code and where it happened. */
export const fromError = (error: Error): StorageFailure => {
  if (error instanceof Worded) return error.reason
  if (SqlError.isSqlError(error)) {
    // The driver's own words say what happened ("canceling statement due to statement timeout").
    const driver = error.reason.cause
    const said = driver instanceof Error && driver.message !== "" && !error.message.includes(driver.message)
    return new StorageFailure({ kind: "Unknown", detail: said ? `${error.message}: ${driver.message}` : error.message })
  }
  if (!PlatformError.isPlatformError(error) || error.reason._tag === "BadArgument") {
    return new StorageFailure({ kind: "Unknown", detail: error.message })
  }
  const reason = error.reason
  const code = codeOf(reason.cause)
  const known = code === undefined ? undefined : byCode[code]
  if (known === undefined) {
    const kind = reason._tag === "PermissionDenied" ? "PermissionDenied" : "Unknown"
    return new StorageFailure({ kind, detail: code === undefined ? error.message : `${code}: ${error.message}` })
  }
  const [kind, plain] = known
  const target = reason.pathOrDescriptor === undefined
    ? ""
    : typeof reason.pathOrDescriptor === "number"
    ? ` on file descriptor ${reason.pathOrDescriptor}`
    : ` on ${reason.pathOrDescriptor}`
  const operation = `${reason.syscall ?? `${reason.module}.${reason.method}`}${target}`
  return new StorageFailure({ kind, detail: `${plain} (${code}, ${operation})` })
}

/** Any failure as a storage failure of its kind. */
const asStorageFailure = (failure: unknown): StorageFailure =>
  failure instanceof StorageFailure ? failure : fromError(failure instanceof Error ? failure : new Error(String(failure)))

/** What a failure says, in plain words, to quote inside another's detail (why a cut failed, say). */
export const describe = (failure: unknown): string => asStorageFailure(failure).detail

/**
 * `failure` as a storage failure of its kind, said in the log's words (`detail`, given what the
 * failure says); a foreign error stays the cause.
 */
export const reworded = (failure: unknown, detail: (said: string) => string, maybeStored?: true): Worded => {
  const said = asStorageFailure(failure)
  const foreign = failure instanceof Worded ? failure.cause : failure instanceof Error ? failure : undefined
  const reason = new StorageFailure({ kind: said.kind, detail: detail(said.detail), ...(maybeStored ? { maybeStored } : {}) })
  return new Worded({ reason, cause: foreign, message: reason.detail })
}

/**
 * A failed append that could not be undone, so it may still appear in the log: `failure` as a storage
 * failure of its kind marked `maybeStored`, its detail followed by `more` (what may stay, where); a
 * foreign error stays the cause.
 */
export const maybeStored = (failure: unknown, more: string): Worded => reworded(failure, (said) => `${said}${more}`, true)

/** Whether a failure is one `maybeStored` worded: what failed may still appear in the log. */
export const isMaybeStored = (failure: unknown): boolean => failure instanceof Worded && failure.reason.maybeStored === true

/** A backend failure as the log's error (see `SessionLog.toError`). */
export const toError = (method: string, session?: string) => (failure: Failure): SessionLogError => {
  if (failure instanceof SessionLogError) return failure
  if (failure instanceof Worded) {
    return SessionLogError.fromReason({ method, session, reason: failure.reason, ...(failure.cause === undefined ? {} : { cause: failure.cause }) })
  }
  if (failure instanceof Error) return SessionLogError.fromReason({ method, session, reason: fromError(failure), cause: failure })
  return SessionLogError.fromReason({ method, session, reason: failure })
}
