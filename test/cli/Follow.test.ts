/**
 * `todo-write show --follow` as a user runs it, with its output piped (and under a pseudo-terminal
 * where `script` exists): it prints the list, then again on each write a separate `serve` process
 * makes, on the file store and on PostgreSQL. Its refusals are checked in this process.
 */
import { assert, describe, it } from "@effect/vitest"
import { spawn, spawnSync } from "node:child_process"
import { afterAll } from "vitest"
import * as PgTest from "../log/sql/PgTest.ts"
import { inProcess } from "./CliTest.ts"
import { bin, connect, start, type Store, tempDirectory, write } from "../fixtures/processes.ts"

const temp = tempDirectory("todo-write-follow-")
afterAll(temp.remove)

/** Follows `session` while a separate server writes two lists to it. */
const followWhileServing = async (session: string, store: Store, extra: ReadonlyArray<string> = []) => {
  const follower = start(["show", "--follow", "--dir", temp.dir, "--store", store.store ?? "file", ...extra, session], store.env)
  try {
    await follower.waitFor((out) => out.includes(`Session ${session}`) || out.includes(`"session":"${session}"`), "the first snapshot")
    const client = await connect(temp.dir, session, store)
    try {
      await write(client, [{ content: "Plan", status: "in_progress" }, { content: "Build", status: "pending" }])
      await follower.waitFor((out) => out.includes("Plan") && out.includes("Build"), "the first list")
      await write(client, [{ content: "Plan", status: "completed" }, { content: "Build", status: "in_progress" }])
      await follower.waitFor((out) => out.includes("[x] Plan") || out.includes(`"status":"completed"`), "the second list")
      return follower.stdout()
    } finally {
      await client.close()
    }
  } finally {
    await follower.stop()
  }
}

describe("todo-write show --follow", () => {
  it("prints a snapshot per change another process writes, piped", async () => {
    const out = await followWhileServing("follow-file", {})
    const snapshots = out.trim().split("\n\n")
    assert.strictEqual(snapshots[0], "Session follow-file: no events yet\n(no plan in this turn)")
    assert.match(snapshots.at(-2)!, /^Session follow-file: 1 events, .*\n\[>\] Plan\n\[ \] Build\n0\/2 completed/)
    assert.match(snapshots.at(-1)!, /^Session follow-file: 2 events, .*\n\[x\] Plan\n\[>\] Build\n1\/2 completed/)
    assert.notInclude(out, "\u001b[", "no terminal codes when piped")
  }, 60_000)

  it("--json prints one JSON line per change", async () => {
    const out = await followWhileServing("follow-json", {}, ["--json"])
    const lines = out.trim().split("\n").map((line) => JSON.parse(line))
    assert.deepStrictEqual(lines.map((line) => line.events), [0, 1, 2])
    assert.deepStrictEqual(lines[2].todos, [{ content: "Plan", status: "completed" }, { content: "Build", status: "in_progress" }])
  }, 60_000)

  const noScript = spawnSync("script", ["--version"]).error !== undefined
  if (noScript) console.warn("SKIPPED: no `script` command to run `show --follow` under a pseudo-terminal")
  it.skipIf(noScript)("redraws in place on a terminal", async () => {
    const command = `${process.execPath} ${bin} show --follow --dir ${temp.dir} follow-tty`
    const child = spawn("script", ["-qfec", command, "/dev/null"], { stdio: ["pipe", "pipe", "pipe"] })
    let out = ""
    child.stdout.on("data", (chunk) => (out += chunk))
    const seen = (text: string) =>
      new Promise<void>((resolve) => {
        const check = () => (out.includes(text) ? resolve() : setTimeout(check, 20))
        check()
      })
    try {
      await seen("no events yet")
      const client = await connect(temp.dir, "follow-tty")
      try {
        await write(client, [{ content: "On a terminal", status: "in_progress" }])
        await seen("[>] On a terminal")
      } finally {
        await client.close()
      }
      assert.strictEqual(out.split("\u001b[H\u001b[2J").length, 3, "two redraws: the empty list, then the written one")
    } finally {
      child.kill("SIGTERM")
    }
  }, 60_000)

  it("refuses --history with --follow, and an invalid id, before following anything", async () => {
    const history = await inProcess(["show", "--follow", "--dir", temp.dir, "--history", "writes", "some-session"])
    assert.strictEqual(history.code, 1)
    assert.strictEqual(history.stdout, "")
    assert.strictEqual(history.stderr, "todo-write: --follow prints the list as it changes; leave out --history, or --follow\n")
    const invalid = await inProcess(["show", "--follow", "--dir", temp.dir, "../etc"])
    assert.strictEqual(invalid.code, 1)
    assert.strictEqual(invalid.stdout, "")
    assert.strictEqual(
      invalid.stderr,
      `todo-write: invalid session id "../etc": Expected a session id of letters, digits, '_' and '-', starting with a letter or digit\n`
    )
  }, 30_000)

  it.skipIf(PgTest.skipReason !== undefined)("follows a session on PostgreSQL", async () => {
    const session = `follow-pg-${process.pid}-${Date.now()}`
    const out = await followWhileServing(session, { store: "postgres", env: { DATABASE_URL: PgTest.url } })
    assert.include(out, "[x] Plan\n[>] Build")
  }, 60_000)
})
