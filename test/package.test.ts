/**
 * The published package, as a user gets it: `npm pack`, installed into an empty project. Every name the
 * README's code blocks import resolves from the path they use, every README example type-checks against
 * the packed `.d.ts`, the core and the file backend import without the optional `@effect/sql-pg`,
 * internals are out of reach, and the `todo-write` bin (a bundle, `rolldown.config.ts`) runs, on PostgreSQL
 * too without `@effect/sql-pg` installed.
 */
import { assert, describe, it } from "@effect/vitest"
import { execFileSync } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { delimiter, dirname, join } from "node:path"
import { afterAll } from "vitest"
import * as PgTest from "./log/sql/PgTest.ts"

const root = new URL("..", import.meta.url).pathname
const work = mkdtempSync(join(tmpdir(), "todo-write-pack-"))
afterAll(() => rmSync(work, { recursive: true, force: true }), 60_000)

// The pinned Node first on PATH, as npm scripts have it, for npm and the bin's `#!/usr/bin/env node`.
const env = { ...process.env, PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH}` }
const run = (command: string, args: ReadonlyArray<string>, cwd: string, extraEnv: Record<string, string> = {}) =>
  execFileSync(command, args, {
    cwd,
    env: { ...env, ...extraEnv },
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
    timeout: 240_000
  })

/** Runs, and answers what it printed whether it succeeded or not. */
const attempt = (command: string, args: ReadonlyArray<string>, cwd: string, extraEnv: Record<string, string> = {}) => {
  try {
    return { ok: true, output: run(command, args, cwd, extraEnv) }
  } catch (error) {
    const failed = error as { readonly stdout?: string; readonly stderr?: string }
    return { ok: false, output: `${failed.stdout ?? ""}${failed.stderr ?? ""}` }
  }
}

/** The README's TypeScript code blocks. */
const readmeBlocks = (): ReadonlyArray<string> =>
  [...readFileSync(join(root, "README.md"), "utf8").matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!)

/** The names each block imports from this package, by module path. */
const importedNames = (blocks: ReadonlyArray<string>) => {
  const byPath = new Map<string, Set<string>>()
  for (const block of blocks) {
    for (const m of block.matchAll(/import\s*\{([^}]*)\}\s*from\s*"(effect-todo-write(?:\/[a-z]+)?)"/g)) {
      const names = byPath.get(m[2]!) ?? new Set<string>()
      for (const name of m[1]!.split(",").map((n) => n.trim()).filter((n) => n.length > 0)) names.add(name)
      byPath.set(m[2]!, names)
    }
  }
  return byPath
}

describe("the npm package", () => {
  it("installs into an empty project; the README's imports and examples work from it", () => {
    run("npm", ["pack", "--pack-destination", work], root)
    const tarball = readdirSync(work).find((name) => name.endsWith(".tgz"))
    assert.isDefined(tarball)

    const project = join(work, "consumer")
    mkdirSync(project)
    writeFileSync(join(project, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }))
    run("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", join(work, tarball!)], project)

    // Without the optional peer: the core, the file backend and MCP import; the SQL entry point says what's missing.
    assert.isFalse(existsSync(join(project, "node_modules/@effect/sql-pg")), "@effect/sql-pg is not installed with the package")
    const blocks = readmeBlocks()
    const names = importedNames(blocks)
    assert.includeMembers([...names.keys()], ["effect-todo-write", "effect-todo-write/file", "effect-todo-write/sql"])
    const probe = (paths: ReadonlyArray<string>) =>
      [
        ...paths.map((path, i) => `import * as m${i} from ${JSON.stringify(path)}`),
        `const missing = []`,
        ...paths.flatMap((path, i) =>
          [...(names.get(path) ?? []), ...(path === "effect-todo-write/mcp" ? ["TodoWriteMcp", "ToolDefinition"] : [])].map(
            (name) => `if (m${i}[${JSON.stringify(name)}] === undefined) missing.push(${JSON.stringify(`${path}: ${name}`)})`
          )
        ),
        `console.log(JSON.stringify(missing))`
      ].join("\n")
    writeFileSync(join(project, "core.mjs"), probe(["effect-todo-write", "effect-todo-write/file", "effect-todo-write/mcp"]))
    assert.deepStrictEqual(JSON.parse(run(process.execPath, ["core.mjs"], project)), [])
    writeFileSync(join(project, "sql.mjs"), probe(["effect-todo-write/sql"]))
    const withoutDriver = attempt(process.execPath, ["sql.mjs"], project)
    assert.isFalse(withoutDriver.ok)
    assert.include(withoutDriver.output, "@effect/sql-pg")

    // The bin runs, and carries its own PostgreSQL client (bundled): it reaches the server with nothing
    // more installed.
    const bin = join(project, "node_modules/.bin/todo-write")
    assert.include(run(bin, ["--help"], project), "serve")
    const schema = JSON.parse(run(bin, ["schema"], project))
    assert.strictEqual(schema.single.mcp.name, "todo_write")
    if (PgTest.skipReason === undefined) {
      const verified = attempt(bin, ["verify", "--store", "postgres", `package-test-missing-${process.pid}`], project, {
        DATABASE_URL: PgTest.url
      })
      assert.isFalse(verified.ok)
      assert.match(verified.output, /^package-test-missing-\d+ +MISSING +no session in PostgreSQL/m, verified.output)
    }

    // Internals are not part of the package's surface.
    writeFileSync(join(project, "internal.mjs"), `await import("effect-todo-write/log/file/Scanner.js")`)
    assert.include(attempt(process.execPath, ["internal.mjs"], project).output, "ERR_PACKAGE_PATH_NOT_EXPORTED")

    // With the driver, the SQL entry point's names resolve too, and every README example type-checks; the
    // provider example with the provider installed as the README says (its beta paths mapped for the types).
    const openAi = JSON.parse(readFileSync(join(root, "package.json"), "utf8")).devDependencies["@effect/ai-openai"]
    run("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", "@effect/sql-pg@^4.0.5", `@effect/ai-openai@${openAi}`], project)
    assert.deepStrictEqual(JSON.parse(run(process.execPath, ["sql.mjs"], project)), [])
    const files = blocks.map((block, i) => {
      writeFileSync(join(project, `readme-${i}.ts`), block)
      return `readme-${i}.ts`
    })
    writeFileSync(join(project, "bad.ts"), `import { TodoWrite } from "effect-todo-write"\nexport const n: number = TodoWrite.name\n`)
    const typecheck = (name: string, checked: ReadonlyArray<string>) => {
      writeFileSync(
        join(project, `tsconfig.${name}.json`),
        JSON.stringify({
          compilerOptions: {
            module: "NodeNext",
            moduleResolution: "NodeNext",
            target: "ES2022",
            lib: ["ES2022", "DOM"],
            strict: true,
            exactOptionalPropertyTypes: true,
            noEmit: true,
            skipLibCheck: true,
            types: [],
            paths: Object.fromEntries(
              ["ai", "http", "encoding", "socket"].map((dir) => [`effect/unstable/${dir}/*`, [`./node_modules/effect/dist/${dir}/*.d.ts`]])
            )
          },
          files: checked
        })
      )
      return attempt(process.execPath, [join(root, "node_modules/typescript/bin/tsc"), "-p", `tsconfig.${name}.json`], project)
    }
    // One program: the README's examples check clean, and a planted type error is the only error
    // reported, so the types are really there.
    const checked = typecheck("readme", [...files, "bad.ts"])
    assert.isFalse(checked.ok)
    const errors = checked.output.split("\n").filter((line) => /error TS\d+/.test(line))
    assert.strictEqual(errors.length, 1, checked.output)
    assert.match(errors[0]!, /^bad\.ts\(2,\d+\): error TS2322/, checked.output)

  }, 300_000)
})
