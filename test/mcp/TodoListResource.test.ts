/**
 * The list as an MCP resource, through a real `todo-write serve` process and the official MCP SDK
 * client: listed, readable as JSON and text, and subscribed clients are told of every write.
 */
import { assert, describe, it } from "@effect/vitest"
import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js"
import { afterAll } from "vitest"
import { connect, tempDirectory, write } from "../fixtures/processes.ts"

const temp = tempDirectory("todo-write-resource-")
afterAll(temp.remove)

describe("TodoListResource over stdio (official SDK client)", () => {
  it("lists todo://session/<id>, reads it as JSON and text, and notifies subscribers of every write", async () => {
    const client = await connect(temp.dir, "res-1")
    try {
      const uri = "todo://session/res-1"
      assert.strictEqual(client.getServerCapabilities()?.resources?.subscribe, true)
      const { resources } = await client.listResources()
      assert.deepStrictEqual(resources.map((r) => r.uri), [uri])

      const read = async () => {
        const { contents } = await client.readResource({ uri })
        const [json, text] = contents.map((content) => ({ mimeType: content.mimeType, text: "text" in content ? content.text : "" }))
        assert.strictEqual(json?.mimeType, "application/json")
        assert.strictEqual(text?.mimeType, "text/plain")
        return { json: JSON.parse(json!.text), text: text!.text }
      }
      const before = await read()
      assert.deepStrictEqual(before.json, { session: "res-1", todos: null, counts: null })
      assert.strictEqual(before.text, "(no plan in this turn)")

      const updates: Array<string> = []
      const waiters: Array<() => void> = []
      client.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => {
        updates.push(notification.params.uri)
        waiters.splice(0).forEach((wake) => wake())
      })
      const updated = (count: number) =>
        new Promise<void>((resolve) => {
          const check = () => (updates.length >= count ? resolve() : waiters.push(check))
          check()
        })
      await client.subscribeResource({ uri })

      await write(client, [{ content: "Plan", status: "in_progress" }, { content: "Build", status: "pending" }])
      await updated(1)
      const first = await read()
      assert.deepStrictEqual(first.json.todos, [
        { content: "Plan", status: "in_progress" },
        { content: "Build", status: "pending" }
      ])
      assert.deepStrictEqual(first.json.counts, { pending: 1, in_progress: 1, completed: 0 })
      assert.include(first.text, "[>] Plan")

      await write(client, [{ content: "Plan", status: "completed" }, { content: "Build", status: "in_progress" }])
      await updated(2)
      assert.include((await read()).text, "[x] Plan")
      assert.deepStrictEqual(updates, [uri, uri])
    } finally {
      await client.close()
    }
  }, 60_000)
})
