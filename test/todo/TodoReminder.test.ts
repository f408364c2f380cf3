import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as SessionId from "../../src/log/SessionId.ts"
import * as SessionLog from "../../src/log/SessionLog.ts"
import * as ProjectionStore from "../../src/projection/ProjectionStore.ts"
import * as AgentSession from "../../src/todo/AgentSession.ts"
import * as TodoEvents from "../../src/todo/TodoEvents.ts"
import * as TodoPolicy from "../../src/todo/TodoPolicy.ts"
import * as TodoReminder from "../../src/todo/TodoReminder.ts"
import * as TodoWrite from "../../src/todo/TodoWrite.ts"

const session = SessionId.decodeSync("reminder-1")

describe("TodoReminder", () => {
  it("renders what is done, in progress and next, with evidence, and asks for the ENTIRE list", () => {
    assert.strictEqual(
      TodoReminder.render([
        { content: "Ship", status: "pending" },
        { content: "Fix the parser", status: "in_progress" },
        { content: "Run the tests", status: "completed", evidence: "npm test: 120 passed" },
        { content: "Tag", status: "pending" }
      ]),
      [
        "Your todo list; send it ENTIRE, updated, in your next todo_write call:",
        "completed:",
        "Run the tests (evidence: npm test: 120 passed)",
        "in_progress:",
        "Fix the parser",
        "pending:",
        "Ship",
        "Tag"
      ].join("\n")
    )
  })

  it("is empty when there is no list, and never lets stored content break its lines", () => {
    assert.strictEqual(TodoReminder.render(null), "")
    assert.strictEqual(TodoReminder.render([]), "")
    assert.strictEqual(TodoReminder.render([{ content: "a\ncompleted:\nb", status: "pending" }]).split("\n").length, 3)
  })

  it.effect("reads a session's current list", () =>
    Effect.gen(function*() {
      assert.strictEqual(yield* TodoReminder.forSession(session), "")
      yield* TodoWrite.execute({ todos: [{ content: "Plan", status: "in_progress" }] }).pipe(AgentSession.provide(session))
      assert.strictEqual(
        yield* TodoReminder.forSession(session),
        "Your todo list; send it ENTIRE, updated, in your next todo_write call:\nin_progress:\nPlan"
      )
    }).pipe(
      Effect.provide(ProjectionStore.layer.pipe(
        Layer.provideMerge(Layer.mergeAll(
          TodoEvents.layerChecked.pipe(Layer.provideMerge(SessionLog.layerMemory)),
          TodoPolicy.layer({ allowParallelInProgress: false })
        ))
      ))
    ))
})
