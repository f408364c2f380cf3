/**
 * The layout's rules, checked on the source: imports point down the layers (nothing under `log/`
 * knows the todo domain, the core knows no backend), and no room outgrows one job.
 */
import { assert, describe, it } from "@effect/vitest"
import { readdirSync, readFileSync, statSync } from "node:fs"
import { join, relative, resolve } from "node:path"

const src = new URL("../src", import.meta.url).pathname

const sources = (dir: string): ReadonlyArray<string> =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? sources(path) : name.endsWith(".ts") ? [path] : []
  })

/** The files under `src/` a module imports (static and dynamic relative imports). */
const importsOf = (file: string): ReadonlyArray<string> =>
  [...readFileSync(file, "utf8").matchAll(/(?:from|import\()\s*"(\.{1,2}\/[^"]+)"/g)].map((m) =>
    relative(src, resolve(file, "..", m[1]!))
  )

describe("the layout", () => {
  const files = sources(src)

  it("has its layers where ARCHITECTURE.md says", () => {
    const folders = new Set(files.map((file) => relative(src, file).split("/")[0]))
    assert.includeMembers([...folders], ["todo", "log", "projection", "mcp", "cli", "index.ts"])
  })

  it("log/ imports nothing from todo/, projection/, mcp/ or cli/", () => {
    for (const file of files.filter((f) => relative(src, f).startsWith("log/"))) {
      for (const target of importsOf(file)) {
        assert.isTrue(target.startsWith("log/"), `${relative(src, file)} imports ${target}`)
      }
    }
  })

  it("the log core imports no backend", () => {
    for (const file of files.filter((f) => /^log\/[^/]+\.ts$/.test(relative(src, f)))) {
      for (const target of importsOf(file)) {
        assert.isFalse(/^log\/(file|sql)\//.test(target), `${relative(src, file)} imports ${target}`)
      }
    }
  })

  it("projection/ and todo/ reach no transport or command, and only the SQL entry point needs @effect/sql-pg", () => {
    for (const file of files) {
      const path = relative(src, file)
      if (path.startsWith("projection/") || path.startsWith("todo/")) {
        for (const target of importsOf(file)) {
          assert.isFalse(/^(mcp|web|cli)\//.test(target), `${path} imports ${target}`)
        }
      }
      const text = readFileSync(file, "utf8")
      if (/from "@effect\/sql-pg"/.test(text)) assert.isTrue(path.startsWith("log/sql/"), `${path} imports @effect/sql-pg`)
    }
  })

  it("no source file is over 300 lines", () => {
    for (const file of files) {
      const lines = readFileSync(file, "utf8").split("\n").length
      assert.isAtMost(lines, 300, `${relative(src, file)} has ${lines} lines`)
    }
  })

  it("every export of a module the package exposes has a doc comment", () => {
    const entries = ["index.ts", "log/file/index.ts", "log/sql/index.ts", "mcp/index.ts"].map((entry) => join(src, entry))
    const modules = entries.flatMap((entry) =>
      [...readFileSync(entry, "utf8").matchAll(/export \* as \w+ from "(\.[^"]+)"/g)].map((m) => resolve(entry, "..", m[1]!))
    )
    assert.isAbove(modules.length, 20)
    const undocumented: Array<string> = []
    for (const module of modules) {
      const lines = readFileSync(module, "utf8").split("\n")
      lines.forEach((line, i) => {
        if (!/^export (const|function|class|interface|type|declare) /.test(line)) return
        let previous = i - 1
        while (previous >= 0 && lines[previous]!.trim() === "") previous--
        if (previous < 0 || !lines[previous]!.trim().endsWith("*/")) undocumented.push(`${relative(src, module)}:${i + 1}`)
      })
    }
    assert.deepStrictEqual(undocumented, [])
  })
})
