/**
 * `todo-write verify`: a readable report, an error for a directory that isn't there, and the same
 * checks over PostgreSQL (a real process, reading `DATABASE_URL` from its environment); the others run
 * in this process, as `Main.ts` runs them.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { existsSync } from "node:fs"
import { join } from "node:path"
import * as SessionId from "../../src/log/SessionId.ts"
import * as SessionLogSql from "../../src/log/sql/SessionLogSql.ts"
import { CheckedSessionLog } from "../../src/log/CheckedSessionLog.ts"
import * as TodoEvents from "../../src/todo/TodoEvents.ts"
import * as PgTest from "../log/sql/PgTest.ts"
import { cli, inProcess, tempDirectory, write, writeSession } from "./CliTest.ts"

describe("todo-write verify", () => {
  it("a missing --dir is an error naming it, and is not created", async () => {
    const dir = join(tempDirectory(), "typo")
    const run = await inProcess(["verify", "--dir", dir])
    assert.strictEqual(run.code, 1)
    assert.strictEqual(run.stdout, "")
    assert.strictEqual(run.stderr.trim(), `todo-write: no directory ${dir} (--dir)`)
    assert.isFalse(existsSync(dir))
  }, 30_000)

  it("lines its columns up, and counts 1 event", async () => {
    const dir = tempDirectory()
    writeSession(dir, "a", [write(["x", "pending"])])
    writeSession(dir, "a-longer-id", [write(["x", "in_progress"]), write(["x", "completed"])])
    const run = await inProcess(["verify", "--dir", dir, "a", "a-longer-id", "gone"])
    assert.strictEqual(run.code, 1)
    const lines = run.stdout.trim().split("\n")
    assert.deepStrictEqual(lines.slice(0, 2), [
      "a            ok        1 event",
      "a-longer-id  ok        2 events"
    ])
    assert.match(lines[2]!, /^gone {9}MISSING {3}no file /)
    assert.strictEqual(run.stderr.trim(), "todo-write: 1 of 3 sessions failed verification")
  }, 30_000)

  it("schema's help shows the default format", async () => {
    const help = await inProcess(["schema", "--help"])
    assert.include(help.stdout, "(default: all)")
  }, 30_000)

  it.live.skipIf(PgTest.skipReason !== undefined)("--store postgres reads each session through the checked log", () =>
    Effect.gen(function*() {
      const good = SessionId.decodeSync(`verify-ok-${process.pid}-${Date.now()}`)
      const bad = `verify-bad-${process.pid}-${Date.now()}`
      const log = yield* CheckedSessionLog
      yield* log.append(good, "todo/write", { todos: [{ content: "a", status: "in_progress" }] })
      yield* log.append(good, "todo/write", { todos: [{ content: "a", status: "completed" }] })
      // Written around the invariant, as a foreign writer could: untrimmed content.
      const sql = yield* SqlClient.SqlClient
      yield* sql`INSERT INTO ${sql(SessionLogSql.defaultTable)} (session, seq, type, time, data)
        VALUES (${bad}, 0, 'todo/write', 0, ${JSON.stringify({ todos: [{ content: " a", status: "pending" }] })}::jsonb)`
      const run = yield* Effect.promise(() =>
        cli(["verify", "--store", "postgres", good, bad, "verify-missing"], { env: { DATABASE_URL: PgTest.url } })
      ).pipe(
        Effect.ensuring(
          sql`DELETE FROM ${sql(SessionLogSql.defaultTable)} WHERE session IN (${good}, ${bad})`.pipe(Effect.ignore)
        )
      )
      assert.strictEqual(run.code, 1, run.stderr)
      const lines = run.stdout.trim().split("\n")
      assert.match(lines[0]!, new RegExp(`^${good} +ok +2 events$`))
      assert.match(lines[1]!, new RegExp(`^${bad} +BAD +.*invariant "todo/write shape" violated at seq 0`))
      assert.match(lines[2]!, /^verify-missing +MISSING +no session in PostgreSQL/)
      assert.strictEqual(run.stderr.trim(), "todo-write: 2 of 3 sessions failed verification")
    }).pipe(
      Effect.provide(
        TodoEvents.layerChecked.pipe(Layer.provide(SessionLogSql.layer()), Layer.provideMerge(PgTest.client))
      )
    ), 30_000)
})
