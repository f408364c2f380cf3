/**
 * The published package, as a user gets it: `npm pack`, installed into an empty project, imported
 * from its root with types, and its `todo-write` bin run.
 */
import { assert, describe, it } from "@effect/vitest"
import { execFileSync } from "node:child_process"
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { delimiter, dirname, join } from "node:path"
import { afterAll } from "vitest"

const root = new URL("..", import.meta.url).pathname
const work = mkdtempSync(join(tmpdir(), "todo-write-pack-"))
afterAll(() => rmSync(work, { recursive: true, force: true }))

// The pinned Node first on PATH, as npm scripts have it, for npm and the bin's `#!/usr/bin/env node`.
const env = { ...process.env, PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH}` }
const run = (command: string, args: ReadonlyArray<string>, cwd: string) =>
  execFileSync(command, args, { cwd, env, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout: 240_000 })

describe("the npm package", () => {
  it("installs into an empty project, imports from its root with types, and runs its bin", () => {
    run("npm", ["pack", "--pack-destination", work], root)
    const tarball = readdirSync(work).find((name) => name.endsWith(".tgz"))
    assert.isDefined(tarball)

    const project = join(work, "consumer")
    run("mkdir", ["-p", project], work)
    writeFileSync(join(project, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }))
    run("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", join(work, tarball!)], project)

    writeFileSync(
      join(project, "main.ts"),
      [
        `import { SessionId, TodoWrite } from "effect-todo-write"`,
        `const description: string = TodoWrite.description({ allowParallelInProgress: false })`,
        `const id: SessionId.SessionId = SessionId.decodeSync("s1")`,
        `console.log(TodoWrite.name, id, description.length > 0)`
      ].join("\n")
    )
    const typecheck = (file: string) => {
      writeFileSync(
        join(project, `tsconfig.${file}.json`),
        JSON.stringify({
          compilerOptions: {
            module: "NodeNext",
            moduleResolution: "NodeNext",
            target: "ES2022",
            strict: true,
            noEmit: true,
            skipLibCheck: true,
            types: []
          },
          files: [file]
        })
      )
      return run(process.execPath, [join(root, "node_modules/typescript/bin/tsc"), "-p", `tsconfig.${file}.json`], project)
    }
    typecheck("main.ts")
    // a type error is caught, so the types are really there
    writeFileSync(join(project, "bad.ts"), `import { TodoWrite } from "effect-todo-write"\nexport const n: number = TodoWrite.name\n`)
    let typeError = ""
    try {
      typecheck("bad.ts")
    } catch (error) {
      typeError = String((error as { stdout?: string }).stdout)
    }
    assert.include(typeError, "TS2322")

    assert.strictEqual(run(process.execPath, ["main.ts"], project).trim(), "todo_write s1 true")

    const bin = join(project, "node_modules/.bin/todo-write")
    assert.include(run(bin, ["--help"], project), "serve")
    const schema = JSON.parse(run(bin, ["schema"], project))
    assert.strictEqual(schema.single.mcp.name, "todo_write")
  }, 300_000)
})
