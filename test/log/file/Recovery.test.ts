import { assert, describe, it } from "@effect/vitest"
import { type ChildProcess, spawn } from "node:child_process"
import { createInterface } from "node:readline"
import { Effect, FileSystem } from "effect"
import * as SessionFile from "../../../src/log/file/Format.ts"
import * as Journal from "../../../src/log/file/Journal.ts"
import { open, readAll, session, withDirectory } from "./FileTest.ts"
import { appender } from "../../support/Executables.ts"

const exited = (child: ChildProcess) =>
  Effect.promise(() => new Promise<void>((resolve) => child.exitCode !== null ? resolve() : child.once("exit", () => resolve())))

describe("Recovery", () => {
  it.live("a dead process's journal is replayed even when its pid now belongs to a live, unrelated process", () =>
    withDirectory((directory) =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        // A journal-mode appender acknowledges some appends, then is SIGKILLed.
        const child = spawn(process.execPath, [appender, directory, session, "-", "journal"], { stdio: ["ignore", "pipe", "inherit"] })
        const acked: Array<number> = []
        createInterface({ input: child.stdout! }).on("line", (line) => acked.push(Number(line.split(" ")[1])))
        yield* Effect.promise(() => new Promise<void>((resolve) => child.stdout!.once("data", () => setTimeout(resolve, 100))))
        child.kill("SIGKILL")
        yield* exited(child)
        // The session file loses what wasn't synced; only the journal still has it.
        const file = `${directory}/${SessionFile.fileName(session)}`
        const text = yield* fs.readFileString(file)
        yield* fs.truncate(file, text.indexOf("\n") + 1)
        // Its pid is reused by a process that has nothing to do with the log.
        const bystander = spawn("sleep", ["600"], { stdio: "ignore" })
        yield* Effect.addFinalizer(() => Effect.andThen(Effect.sync(() => bystander.kill("SIGKILL")), exited(bystander)))
        const [name] = (yield* fs.readDirectory(directory)).filter((n) => n.endsWith(Journal.extension))
        const bytes = yield* fs.readFileString(`${directory}/${name}`)
        const newline = bytes.indexOf("\n")
        const { crc: _, ...header } = JSON.parse(bytes.slice(0, newline))
        const reused = `${directory}/${Journal.fileName(bystander.pid!, "reused")}`
        yield* fs.writeFileString(reused, SessionFile.seal(JSON.stringify({ ...header, pid: bystander.pid })) + bytes.slice(newline + 1))
        yield* fs.remove(`${directory}/${name}`)
        // Every acknowledged append is back, and the journal is gone.
        const entries = yield* open(directory, readAll)
        assert.isAbove(acked.length, 0)
        assert.isAtLeast(entries.length, Math.max(...acked) + 1, "every acknowledged append is replayed")
        assert.deepStrictEqual((yield* fs.readDirectory(directory)).filter((n) => n.endsWith(Journal.extension)), [])
      })
    ), 30_000)
})
