/**
 * `todo-write ui` in a real headless Chromium (Debian's `chromium`, driven by `playwright-core`):
 * while separate `todo-write serve` processes write lists through the official MCP SDK client, the
 * open page shows each new list within 2 s without a reload, shows hostile content as text, and
 * shows a new session as it appears. Screenshots are saved under the test's temporary directory
 * (and copied into the directory `$TODO_WRITE_UI_SCREENSHOTS` when set, which is how `docs/ui.png` was made).
 *
 * Where no Chromium can be found the tests are skipped, saying why; under `CI=true` they run (and
 * fail without a browser).
 */
import { assert, describe, it } from "@effect/vitest"
import { copyFileSync, existsSync, statSync } from "node:fs"
import { join } from "node:path"
import { chromium, type Page } from "playwright-core"
import { afterAll } from "vitest"
import { connect, start, tempDirectory, write } from "../fixtures/processes.ts"

const candidates = [process.env.CHROMIUM_PATH, "/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"]
const executablePath = candidates.find((path): path is string => path !== undefined && existsSync(path))
const skipReason = executablePath !== undefined || process.env.CI === "true"
  ? undefined
  : "no Chromium found (tried $CHROMIUM_PATH, /usr/bin/chromium, /usr/bin/chromium-browser, /usr/bin/google-chrome): " +
    "the browser tests of `todo-write ui` are skipped; `apt-get install -y chromium` to run them"
if (skipReason !== undefined) console.warn(`SKIPPED: ${skipReason}`)

const temp = tempDirectory("todo-write-ui-")
afterAll(temp.remove)

const hostile = "<img src=x onerror=alert(1)>"

/** Waits (2 s at most) until the card of `session` lists exactly `contents`. */
const shows = (page: Page, session: string, contents: ReadonlyArray<string>) =>
  page.waitForFunction(
    ([session, contents]) => {
      const card = document.querySelector(`[data-session="${session}"]`)
      const shown = Array.from(card?.querySelectorAll("li .content") ?? [], (node) => node.textContent)
      return JSON.stringify(shown) === JSON.stringify(contents)
    },
    [session, contents] as const,
    { timeout: 2000 }
  )

describe.skipIf(skipReason !== undefined)("todo-write ui in headless Chromium", () => {
  it("shows each new list live, hostile content as text, and new sessions as they appear", async () => {
    const ui = start(["ui", "--dir", temp.dir, "--port", "0"])
    // In CI a missing browser fails here (playwright-core has no browser of its own), never skips.
    const browser = await chromium.launch({ ...(executablePath === undefined ? {} : { executablePath }), args: ["--no-sandbox"] })
    const clients: Array<Awaited<ReturnType<typeof connect>>> = []
    try {
      const url = (await ui.waitFor((out) => /http:\/\/\S+\//.test(out), "its URL")).match(/http:\/\/\S+\//)![0]
      const page = await browser.newPage({ viewport: { width: 860, height: 600 } })
      const problems: Array<string> = []
      page.on("console", (message) => message.type() === "error" && problems.push(message.text()))
      page.on("pageerror", (error) => problems.push(error.message))
      page.on("dialog", (dialog) => problems.push(`a dialog opened: ${dialog.message()}`))
      await page.goto(url)
      await page.waitForSelector("#live.open")
      await page.evaluate(() => Object.assign(window, { notReloaded: true }))

      const agent = await connect(temp.dir, "refactor-parser")
      clients.push(agent)
      await write(agent, [
        { content: "Read the parser and its tests", status: "in_progress" },
        { content: "Split tokenizer from parser", status: "pending" },
        { content: "Run the test suite", status: "pending" }
      ])
      await shows(page, "refactor-parser", ["Read the parser and its tests", "Split tokenizer from parser", "Run the test suite"])
      await write(agent, [
        { content: "Read the parser and its tests", status: "completed" },
        { content: "Split tokenizer from parser", status: "in_progress" },
        { content: "Run the test suite", status: "pending" }
      ])
      await page.waitForFunction(() =>
        document.querySelector(`[data-session="refactor-parser"] li[data-status="completed"]`) !== null, undefined, {
        timeout: 2000
      })

      // A second agent's session appears without a reload, first: it is the most recent.
      const second = await connect(temp.dir, "fix-login-bug")
      clients.push(second)
      await write(second, [
        { content: "Reproduce the login failure", status: "completed" },
        { content: "Fix the session cookie's expiry", status: "in_progress" }
      ])
      await shows(page, "fix-login-bug", ["Reproduce the login failure", "Fix the session cookie's expiry"])
      const order = await page.$$eval("[data-session]", (cards) => cards.map((card) => card.getAttribute("data-session")))
      assert.deepStrictEqual(order, ["fix-login-bug", "refactor-parser"])

      // Hostile content is shown as the characters it is.
      const attacker = await connect(temp.dir, "hostile")
      clients.push(attacker)
      await write(attacker, [{ content: hostile, status: "in_progress" }])
      await shows(page, "hostile", [hostile])
      assert.strictEqual(await page.locator("img").count(), 0)

      assert.isTrue(await page.evaluate(() => "notReloaded" in window), "the page was never reloaded")
      const screenshot = join(temp.dir, "ui.png")
      await page.screenshot({ path: screenshot, fullPage: true })
      assert.isAbove(statSync(screenshot).size, 0)

      // A session's page: its history, growing live.
      await page.goto(`${url}session/refactor-parser`)
      await page.waitForFunction(() => document.querySelectorAll(".history .card").length === 2, undefined, { timeout: 2000 })
      await write(agent, [
        { content: "Read the parser and its tests", status: "completed" },
        { content: "Split tokenizer from parser", status: "completed" },
        { content: "Run the test suite", status: "in_progress" }
      ])
      await page.waitForFunction(() => document.querySelectorAll(".history .card").length === 3, undefined, { timeout: 2000 })
      assert.strictEqual(await page.locator(".current li[data-status='in_progress'] .content").textContent(), "Run the test suite")
      await page.setViewportSize({ width: 390, height: 844 })
      await page.screenshot({ path: join(temp.dir, "ui-session-phone.png"), fullPage: true })
      const keep = process.env.TODO_WRITE_UI_SCREENSHOTS
      if (keep) for (const name of ["ui.png", "ui-session-phone.png"]) copyFileSync(join(temp.dir, name), join(keep, name))

      assert.deepStrictEqual(problems, [], "no script error, CSP violation or dialog")
    } finally {
      await Promise.all(clients.map((client) => client.close()))
      await browser.close()
      await ui.stop()
    }
  }, 90_000)
})
