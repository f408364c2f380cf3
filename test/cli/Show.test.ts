/**
 * `todo-write show` as a new user meets it: mistakes answered in one line that says what to do. The
 * commands run in this process (`inProcess`, as `Main.ts` runs them), except where the claim is the
 * process's: a path relative to its working directory, and no stack trace from its runtime.
 */
import { assert, describe, it } from "@effect/vitest"
import { existsSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { cli, inProcess, tempDirectory, write, writeSession } from "./CliTest.ts"

const oneLine = (stderr: string) => {
  const lines = stderr.trim().split("\n")
  assert.strictEqual(lines.length, 1, stderr)
  return lines[0]!
}

describe("todo-write show", () => {
  it("a missing --dir is an error naming it, and is not created", async () => {
    const dir = join(tempDirectory(), "typo")
    const run = await inProcess(["show", "--dir", dir, "s1"])
    assert.notStrictEqual(run.code, 0)
    assert.strictEqual(run.stdout, "")
    assert.strictEqual(oneLine(run.stderr), `todo-write: no directory ${dir} (--dir)`)
    assert.isFalse(existsSync(dir))
  }, 30_000)

  it("a missing session says where it looked", async () => {
    const cwd = tempDirectory()
    writeSession(cwd, "s1", [])
    const run = await cli(["show", "--dir", ".", "nope"], { cwd })
    assert.notStrictEqual(run.code, 0)
    assert.strictEqual(oneLine(run.stderr), `todo-write: no session nope in ${cwd}`)
  }, 30_000)

  it("a file name or path given for the session suggests its id", async () => {
    const dir = tempDirectory()
    const name = await inProcess(["show", "--dir", dir, "s1.jsonl"])
    assert.notStrictEqual(name.code, 0)
    assert.include(oneLine(name.stderr), `did you mean the session id "s1"?`)
    const path = await inProcess(["show", `${dir}/s1.jsonl`])
    assert.include(oneLine(path.stderr), `did you mean --dir "${dir}" and the session id "s1"?`)
  }, 30_000)

  it("a corrupt log is one line naming the line, with no stack trace", async () => {
    const dir = tempDirectory()
    const file = writeSession(dir, "s1", [write(["a", "in_progress"]), write(["a", "completed"])])
    const lines = readFileSync(file, "utf8").split("\n")
    lines[2] = lines[2]!.replace(`"seq":1`, `"seq":1,,`)
    writeFileSync(file, lines.join("\n"))
    const run = await cli(["show", "--dir", dir, "s1"])
    assert.notStrictEqual(run.code, 0)
    const line = oneLine(run.stderr)
    assert.include(line, `session s1 in ${dir}`)
    assert.include(line, "line 3")
  }, 30_000)

  it("says 1 event, not 1 events", async () => {
    const dir = tempDirectory()
    writeSession(dir, "s1", [write(["a", "in_progress"])])
    const run = await inProcess(["show", "--dir", dir, "s1"])
    assert.strictEqual(run.code, 0, run.stderr)
    assert.include(run.stdout, "Session s1: 1 event, last at")
  }, 30_000)

  it("help shows the defaults; a usage error is one line and a hint, not the help", async () => {
    const help = await inProcess(["show", "--help"])
    assert.strictEqual(help.code, 0)
    assert.include(help.stdout, "(default: ./.todo-write/sessions)")
    assert.include(help.stdout, "(default: file)")
    const usage = await inProcess(["show"])
    assert.notStrictEqual(usage.code, 0)
    assert.strictEqual(usage.stdout, "")
    assert.deepStrictEqual(usage.stderr.trim().split("\n"), [
      "todo-write: Missing required argument: session",
      "Run `todo-write show --help` for usage."
    ])
  }, 30_000)
})
