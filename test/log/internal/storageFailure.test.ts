/**
 * How a foreign failure becomes a `StorageFailure`: the system error code decides the kind and the
 * plain words, with the operation and where it happened; anything else keeps its own message.
 */
import { assert, describe, it } from "@effect/vitest"
import * as PlatformError from "effect/PlatformError"
import * as SqlError from "effect/sql/SqlError"
import * as StorageFailure from "../../../src/log/internal/storageFailure.ts"
import { SessionLogError, StorageFailure as SessionLogErrorReason } from "../../../src/log/SessionLogError.ts"

const system = (options: Partial<Parameters<typeof PlatformError.systemError>[0]> & { readonly code?: unknown }) => {
  const { code, ...rest } = options
  return PlatformError.systemError({
    _tag: "Unknown",
    module: "FileSystem",
    method: "writeAll",
    ...(code === undefined ? {} : { cause: { code } }),
    ...rest
  })
}

describe("storageFailure.fromError", () => {
  it("a known code: its kind, plain words, the code, the syscall and the path", () => {
    const failure = StorageFailure.fromError(system({ code: "ENOSPC", syscall: "write", pathOrDescriptor: "/d/s.jsonl" }))
    assert.strictEqual(failure.kind, "DiskFull")
    assert.strictEqual(failure.detail, "the disk is full (ENOSPC, write on /d/s.jsonl)")
  })

  it("a descriptor instead of a path; the module and method where there is no syscall; neither", () => {
    assert.strictEqual(
      StorageFailure.fromError(system({ code: "EIO", pathOrDescriptor: 7 })).detail,
      "an I/O error: the device failed (EIO, FileSystem.writeAll on file descriptor 7)"
    )
    assert.strictEqual(
      StorageFailure.fromError(system({ code: "EROFS" })).detail,
      "the file system is read-only (EROFS, FileSystem.writeAll)"
    )
  })

  it("an unknown code keeps the error's message after the code; its kind from the platform's tag", () => {
    const denied = system({ _tag: "PermissionDenied", code: "EWHATEVER" })
    const failure = StorageFailure.fromError(denied)
    assert.strictEqual(failure.kind, "PermissionDenied")
    assert.strictEqual(failure.detail, `EWHATEVER: ${denied.message}`)
    assert.strictEqual(StorageFailure.fromError(system({ code: "EWHATEVER" })).kind, "Unknown")
  })

  it("no code, or a code that isn't a string: the error's own message, kind Unknown", () => {
    for (const cause of [undefined, null, "ENOSPC", { code: 28 }, {}]) {
      const error = PlatformError.systemError({ _tag: "Unknown", module: "FileSystem", method: "sync", cause })
      const failure = StorageFailure.fromError(error)
      assert.strictEqual(failure.kind, "Unknown", String(cause))
      assert.strictEqual(failure.detail, error.message, String(cause))
    }
  })

  it("an SQL error says what its driver said, once", () => {
    const driver = new Error("canceling statement due to statement timeout")
    const timedOut = new SqlError.SqlError({ reason: new SqlError.StatementTimeoutError({ cause: driver, message: "PgConnection: Query failed" }) })
    assert.deepInclude(StorageFailure.fromError(timedOut), {
      kind: "Unknown",
      detail: `${timedOut.message}: canceling statement due to statement timeout`
    })
    const plain = new SqlError.SqlError({ reason: new SqlError.ConnectionError({ cause: new Error("gone"), message: "connection lost: gone" }) })
    assert.strictEqual(StorageFailure.fromError(plain).detail, plain.message)
  })

  it("a bad argument and a foreign error keep their own message", () => {
    const bad = PlatformError.badArgument({ module: "FileSystem", method: "open", cause: { code: "ENOSPC" } })
    assert.deepStrictEqual([StorageFailure.fromError(bad).kind, StorageFailure.fromError(bad).detail], ["Unknown", bad.message])
    const foreign = Object.assign(new Error("connection reset"), { code: "ENOSPC" })
    assert.deepStrictEqual([StorageFailure.fromError(foreign).kind, StorageFailure.fromError(foreign).detail], ["Unknown", "connection reset"])
  })

  it("toError passes the log's own error through, wraps an Error with its cause, and a reason as it is", () => {
    const own = StorageFailure.toError("read", "s")(new Error("x"))
    assert.instanceOf(own, SessionLogError)
    assert.strictEqual(StorageFailure.toError("append", "s")(own), own)
    const wrapped = StorageFailure.toError("append", "s")(system({ code: "ENOSPC" }))
    assert.strictEqual(wrapped.reason._tag, "StorageFailure")
    assert.strictEqual(wrapped.method, "append")
  })
})

describe("storageFailure.maybeStored", () => {
  it("marks the failure as maybe stored, keeps its kind, adds to its detail, and keeps the foreign error as the cause", () => {
    const foreign = system({ code: "EIO", syscall: "fdatasync", pathOrDescriptor: "/d/j.wal" })
    const worded = StorageFailure.maybeStored(foreign, ", and more")
    assert.deepInclude(worded.reason, {
      kind: "IoError",
      detail: "an I/O error: the device failed (EIO, fdatasync on /d/j.wal), and more",
      maybeStored: true
    })
    assert.strictEqual(worded.message, worded.reason.detail, "printed as it is, it says what happened")
    const error = StorageFailure.toError("append", "s")(worded)
    assert.strictEqual(error.reason, worded.reason)
    assert.strictEqual(error.cause, foreign)
    assert.include(error.message, "and more")
  })

  it("added to twice, the first foreign error stays the cause; a reason of the log's own has no cause", () => {
    const foreign = system({ code: "ENOSPC", syscall: "write", pathOrDescriptor: "/d/s.jsonl" })
    const twice = StorageFailure.maybeStored(StorageFailure.maybeStored(foreign, "; one"), "; two")
    assert.deepInclude(twice.reason, { kind: "DiskFull", detail: "the disk is full (ENOSPC, write on /d/s.jsonl); one; two" })
    assert.strictEqual(StorageFailure.toError("append")(twice).cause, foreign)
    const own = StorageFailure.maybeStored(new SessionLogErrorReason({ kind: "IoError", detail: "the thread exited" }), "; more")
    assert.deepInclude(own.reason, { kind: "IoError", detail: "the thread exited; more" })
    assert.isUndefined(StorageFailure.toError("append")(own).cause)
  })
})


describe("storageFailure.describe", () => {
  it("a foreign error, a reason of the log's own and a worded failure each in plain words", () => {
    const foreign = system({ code: "EROFS", syscall: "ftruncate", pathOrDescriptor: "/d/s.jsonl" })
    assert.strictEqual(StorageFailure.describe(foreign), "the file system is read-only (EROFS, ftruncate on /d/s.jsonl)")
    assert.strictEqual(StorageFailure.describe(new SessionLogErrorReason({ kind: "IoError", detail: "the thread exited" })), "the thread exited")
    assert.strictEqual(StorageFailure.describe(StorageFailure.maybeStored(foreign, "; more")), "the file system is read-only (EROFS, ftruncate on /d/s.jsonl); more")
    assert.strictEqual(StorageFailure.describe("a defect"), "a defect")
  })
})
