import { assert, describe, it } from "@effect/vitest"
import * as SessionLog from "../../src/log/SessionLog.ts"
import { systemError } from "./file/FileTest.ts"
import { conformance } from "./SessionLogConformance.ts"

conformance("memory", () => SessionLog.layerMemory)

describe("SessionLog.toError", () => {
  it("says plainly what a system error means, names its code and where, and keeps it as the cause", () => {
    const cases = [
      ["ENOSPC", "DiskFull", "the disk is full"],
      ["EROFS", "ReadOnly", "the file system is read-only"],
      ["EACCES", "PermissionDenied", "permission denied"],
      ["EDQUOT", "QuotaExceeded", "the disk quota is exceeded"],
      ["EIO", "IoError", "I/O error"]
    ] as const
    for (const [code, kind, plain] of cases) {
      const cause = systemError(code, "writeAll", "/data/s.jsonl")
      const error = SessionLog.toError("append", "s")(cause)
      assert.deepInclude(error.reason, { _tag: "StorageFailure", kind })
      assert.include(error.message, plain)
      assert.include(error.message, code)
      assert.include(error.message, "/data/s.jsonl")
      assert.notInclude(error.message, "Unknown:")
      assert.strictEqual(error.cause, cause)
    }
    const descriptor = SessionLog.toError("append", "s")(systemError("ENOSPC", "writeAll", 21))
    assert.include(descriptor.message, "file descriptor 21")
  })

  it("a failure it has no words for keeps its own message, as kind Unknown", () => {
    const odd = SessionLog.toError("read")(systemError("EWEIRD", "open", "/x"))
    assert.deepInclude(odd.reason, { _tag: "StorageFailure", kind: "Unknown" })
    assert.include(odd.message, "EWEIRD")
    const foreign = SessionLog.toError("read")(new Error("connection reset"))
    assert.deepInclude(foreign.reason, { _tag: "StorageFailure", kind: "Unknown", detail: "connection reset" })
  })
})
