import { assert, describe, it } from "@effect/vitest"
import { Cause, Effect, Exit, Layer, Logger, PlatformError, Ref, Schema, Stream } from "effect"
import { LanguageModel, Prompt, Tool } from "effect/ai"
import * as AgentSession from "../../src/todo/AgentSession.ts"
import * as ProjectionStore from "../../src/projection/ProjectionStore.ts"
import * as SessionId from "../../src/log/SessionId.ts"
import * as SessionLog from "../../src/log/SessionLog.ts"
import { Corrupt, InvariantViolation, Locked, type Reason, SessionLogError, StorageFailure } from "../../src/log/SessionLogError.ts"
import * as TodoPolicy from "../../src/todo/TodoPolicy.ts"
import * as TodoWrite from "../../src/todo/TodoWrite.ts"
import { NoOwningSessionError, TodoValidationError } from "../../src/todo/TodoWriteError.ts"
import { failureOf, readAll } from "../log/SessionLogConformance.ts"
import * as TodoProjection from "../../src/todo/TodoProjection.ts"
import * as TodoEvents from "../../src/todo/TodoEvents.ts"
import * as TodoWriteError from "../../src/todo/TodoWriteError.ts"
import { fiveProblems } from "./FiveProblems.ts"

const session = SessionId.decodeSync("agent-1")

const env = (allowParallelInProgress: boolean, requireCompletedEvidence = false) => {
  const log = TodoEvents.layerChecked.pipe(Layer.provideMerge(SessionLog.layerMemory))
  const base = Layer.mergeAll(log, TodoPolicy.layer({ allowParallelInProgress, requireCompletedEvidence }))
  return Layer.mergeAll(TodoWrite.layer, ProjectionStore.layer).pipe(Layer.provideMerge(base))
}

describe("TodoWrite", () => {
  describe("definition", () => {
    it("sends a closed JSON Schema with a description on every field", () => {
      const schema = Tool.getJsonSchema(TodoWrite.tool({ allowParallelInProgress: false })) as any
      assert.strictEqual(schema.additionalProperties, false)
      assert.deepStrictEqual(schema.required, ["todos"])
      const items = schema.properties.todos.items
      assert.strictEqual(items.additionalProperties, false)
      // the strict form every provider accepts: every key required, evidence nullable (null means none)
      assert.deepStrictEqual(items.required, ["content", "status", "evidence"])
      assert.deepStrictEqual(items.properties.status.enum, ["pending", "in_progress", "completed"])
      assert.isString(schema.properties.todos.description)
      assert.isString(items.properties.content.description)
      assert.isString(items.properties.status.description)
      assert.deepStrictEqual(items.properties.evidence.type, ["string", "null"])
      assert.isString(items.properties.evidence.description)
    })

    it("differs between the four policies only in the active-status clause and the evidence clause", () => {
      const clauses = (allowParallelInProgress: boolean, requireCompletedEvidence: boolean) => {
        const policy = { allowParallelInProgress, requireCompletedEvidence }
        return TodoWrite.description(policy).replace(TodoWrite.activeClause(policy), "<active>")
          .replace(TodoWrite.evidenceClause(policy), "<evidence>")
      }
      const all = [clauses(false, false), clauses(false, true), clauses(true, false), clauses(true, true)]
      assert.deepStrictEqual(new Set(all).size, 1)
      assert.include(all[0], "<active>")
      assert.include(all[0], "<evidence>")
      assert.include(TodoWrite.evidenceClause({ requireCompletedEvidence: true }), "must cite evidence")
      assert.include(TodoWrite.evidenceClause({}), "may cite evidence")
      // the toolkit built from the policy in context describes that policy's evidence setting
      const required = { allowParallelInProgress: false, requireCompletedEvidence: true, maxItems: 100, maxContentLength: 1000 }
      assert.include(Tool.getDescription(TodoWrite.tool(required)), "must cite evidence")
    })

    it("differs between policies only in the active-status clause", () => {
      const single = TodoWrite.description({ allowParallelInProgress: false })
      const parallel = TodoWrite.description({ allowParallelInProgress: true })
      assert.notStrictEqual(single, parallel)
      assert.strictEqual(
        single.replace(TodoWrite.activeClause({ allowParallelInProgress: false }), "<clause>"),
        parallel.replace(TodoWrite.activeClause({ allowParallelInProgress: true }), "<clause>")
      )
      for (const text of ["ENTIRE list", "REPLACES", "one todo per concrete step", "completed the moment", "trivial"]) {
        assert.include(single, text)
      }
      assert.include(single, "at most one todo in_progress")
      assert.include(parallel, "several only when work truly runs in parallel")
      assert.strictEqual(Tool.getDescription(TodoWrite.tool({ allowParallelInProgress: true })), parallel)
    })
  })

  describe("execute", () => {
    it.effect("logs the trimmed list and answers with counts; the last write wins", () =>
      Effect.gen(function*() {
        const first = yield* TodoWrite.execute({ todos: [{ content: " plan ", status: "in_progress" }] })
        assert.deepStrictEqual(first, {
          todos: [{ content: "plan", status: "in_progress" }],
          counts: { pending: 0, in_progress: 1, completed: 0 }
        })
        yield* TodoWrite.execute({ todos: [{ content: "plan", status: "completed" }, { content: "do", status: "pending" }] })
        const log = yield* SessionLog.SessionLog
        const entries = yield* readAll(log, session)
        assert.deepStrictEqual(entries.map((e) => e.data), [
          { todos: [{ content: "plan", status: "in_progress" }] },
          { todos: [{ content: "plan", status: "completed" }, { content: "do", status: "pending" }] }
        ])
        const store = yield* ProjectionStore.ProjectionStore
        assert.deepStrictEqual(yield* store.get(TodoProjection.todos, session), [
          { content: "plan", status: "completed" },
          { content: "do", status: "pending" }
        ])
      }).pipe(AgentSession.provide(session), Effect.provide(env(false))))

    it.effect("single-active rejects two in_progress items and writes nothing; parallel accepts them", () =>
      Effect.gen(function*() {
        const todos = [{ content: "a", status: "in_progress" }, { content: "b", status: "in_progress" }]
        const single = yield* Effect.exit(TodoWrite.execute({ todos }).pipe(Effect.provide(env(false))))
        const error = failureOf(single)
        assert.strictEqual(error._tag, "TodoValidationError")
        if (error._tag === "TodoValidationError") assert.strictEqual(error.violations[0].code, "too_many_in_progress")

        const written = yield* Effect.gen(function*() {
          const rejected = yield* Effect.exit(TodoWrite.execute({ todos }))
          assert.strictEqual(failureOf(rejected)._tag, "TodoValidationError")
          return yield* readAll(yield* SessionLog.SessionLog, session)
        }).pipe(Effect.provide(env(false)))
        assert.deepStrictEqual(written, [])

        const accepted = yield* TodoWrite.execute({ todos }).pipe(Effect.provide(env(true)))
        assert.strictEqual(accepted.counts.in_progress, 2)
      }).pipe(AgentSession.provide(session)))

    it.effect("logs evidence, which the projection carries; requires it on completed items when the policy says so", () =>
      Effect.gen(function*() {
        const todos = [{ content: "Run the tests", status: "completed", evidence: " npm test: 12 passed " }]
        const result = yield* TodoWrite.execute({ todos })
        assert.deepStrictEqual(result.todos, [{ content: "Run the tests", status: "completed", evidence: "npm test: 12 passed" }])
        const store = yield* ProjectionStore.ProjectionStore
        assert.deepStrictEqual(yield* store.get(TodoProjection.todos, session), result.todos)
        const error = failureOf(yield* Effect.exit(TodoWrite.execute({ todos: [{ content: "Ship", status: "completed" }] })))
        assert.strictEqual(error._tag, "TodoValidationError")
        if (error._tag === "TodoValidationError") assert.strictEqual(error.violations[0].code, "missing_evidence")
      }).pipe(AgentSession.provide(session), Effect.provide(env(false, true))))

    it.effect("every rejection has a code a program can branch on", () =>
      Effect.gen(function*() {
        const invalid = failureOf(yield* Effect.exit(TodoWrite.execute({ todos: 1 }).pipe(AgentSession.provide(session))))
        assert.strictEqual(TodoWriteError.code(invalid), "invalid_arguments")
        const unowned = failureOf(yield* Effect.exit(TodoWrite.execute({ todos: [] })))
        assert.strictEqual(TodoWriteError.code(unowned), "no_owning_session")
        assert.strictEqual(TodoWriteError.NoOwningSessionError.instance.code, "no_owning_session")
        const failed = (reason: Reason) =>
          TodoWriteError.code(SessionLogError.fromReason({ method: "append", session: "s", reason }))
        assert.strictEqual(failed(new Locked({ detail: "pid 7" })), "session_locked")
        assert.strictEqual(failed(new StorageFailure({ detail: "ENOSPC" })), "storage_failed")
        assert.strictEqual(failed(new Corrupt({ detail: "bad line" })), "storage_failed")
        assert.strictEqual(failed(new InvariantViolation({ rule: "r", detail: "d" })), "rejected_by_log")
      }).pipe(Effect.provide(env(false))))

    it.effect("fails with a typed error when no agent session owns the call, and writes nothing", () =>
      Effect.gen(function*() {
        const error = failureOf(yield* Effect.exit(TodoWrite.execute({ todos: [] })))
        assert.strictEqual(error._tag, "NoOwningSessionError")
        assert.include(error.message, "requires an owning agent session")
        assert.deepStrictEqual(yield* (yield* SessionLog.SessionLog).sessions, [])
      }).pipe(Effect.provide(env(false))))

    it.effect("a log written under the parallel policy still loads after switching to single-active", () =>
      Effect.gen(function*() {
        const memory = yield* Layer.build(SessionLog.layerMemory)
        const shared = Layer.succeedContext(memory)
        const withPolicy = (allowParallelInProgress: boolean) =>
          Layer.mergeAll(TodoWrite.layer, ProjectionStore.layer).pipe(
            Layer.provideMerge(Layer.mergeAll(
              TodoEvents.layerChecked.pipe(Layer.provide(shared)),
              TodoPolicy.layer({ allowParallelInProgress })
            ))
          )
        const todos = [{ content: "a", status: "in_progress" }, { content: "b", status: "in_progress" }] as const
        yield* TodoWrite.execute({ todos }).pipe(AgentSession.provide(session), Effect.provide(withPolicy(true)))
        const loaded = yield* Effect.gen(function*() {
          const store = yield* ProjectionStore.ProjectionStore
          return yield* store.get(TodoProjection.todos, session)
        }).pipe(Effect.provide(withPolicy(false)))
        assert.deepStrictEqual(loaded, todos)
      }))
  })

  describe("what the model reads", () => {
    // A session log whose storage fails the way a real one does: with a path and an OS message.
    const failingLog = (failure: SessionLog.Failure) =>
      TodoWrite.layer.pipe(
        Layer.provide(TodoPolicy.layer({ allowParallelInProgress: false })),
        Layer.provide(TodoEvents.layerChecked),
        Layer.provide(Layer.effect(
          SessionLog.SessionLog,
          SessionLog.make({ append: () => Effect.fail(failure), read: () => Stream.empty, sessions: Effect.succeed([]) })
        ))
      )
    const callOnce = Effect.gen(function*() {
      const handlers = yield* TodoWrite.toolkit({ allowParallelInProgress: false })
      const [result] = yield* Stream.runCollect(
        yield* handlers.handle("todo_write", { todos: [{ content: "a", status: "in_progress" }] })
      )
      return result!
    }).pipe(AgentSession.provide(session))
    const path = "/srv/agents/sessions/agent-1.jsonl"
    const logged: Array<{ readonly message: unknown; readonly cause: Cause.Cause<unknown> }> = []
    const capture = Logger.make(({ cause, message }) => logged.push({ message, cause }))

    it.effect("a storage failure is one short line, without the path; the program keeps the cause", () =>
      Effect.gen(function*() {
        const cause = PlatformError.systemError({
          _tag: "Unknown",
          module: "FileSystem",
          method: "writeAll",
          pathOrDescriptor: path,
          description: "i/o error"
        })
        const result = yield* callOnce.pipe(Effect.provide(failingLog(cause)))
        assert.isTrue(result.isFailure)
        assert.strictEqual(
          result.encodedResult,
          "todo_write could not save the list (storage failed), so nothing was saved. Retry once with the ENTIRE list; if it fails again, tell the user."
        )
        const error = result.result
        assert.isTrue(error instanceof SessionLogError)
        if (error instanceof SessionLogError) {
          assert.include(error.message, path)
          assert.strictEqual(error.cause, cause)
        }
        // ...and the operators' log has all of it
        assert.deepStrictEqual(logged.map((l) => l.message), [["todo_write could not save the list"]])
        assert.include(Cause.pretty(logged[0]!.cause), path)
      }).pipe(Effect.provide(Logger.layer([capture]))))

    it.effect("a storage failure that could not be undone says the list may or may not have been saved", () =>
      Effect.gen(function*() {
        const result = yield* callOnce.pipe(
          Effect.provide(failingLog(new StorageFailure({ kind: "IoError", detail: `${path} could not be cut back`, maybeStored: true })))
        )
        assert.isTrue(result.isFailure)
        assert.strictEqual(
          result.encodedResult,
          "todo_write could not confirm that the list was saved (storage failed): it may or may not have been. Tell the user; retrying will not help until the session log is reopened."
        )
      }).pipe(Effect.provide(Logger.layer([capture]))))

    it.effect("a session held by another process says so, without the lock's path", () =>
      Effect.gen(function*() {
        const result = yield* callOnce.pipe(
          Effect.provide(failingLog(new Locked({ detail: `${path}.lock is held by pid 4242` })))
        )
        assert.isTrue(result.isFailure)
        assert.include(String(result.encodedResult), "another process holds this session")
        assert.notInclude(String(result.encodedResult), "/srv")
        assert.notInclude(String(result.encodedResult), "4242")
      }))

    it("every failure encodes to text and every success to its line; neither decodes back", () => {
      const violation = TodoValidationError.fromViolations([{ code: "invalid_status", path: ["todos", 0, "status"], message: "Expected one of the statuses" }])
      assert.strictEqual(Schema.encodeSync(TodoWrite.FailureText)(violation), violation.message)
      assert.strictEqual(Schema.encodeSync(TodoWrite.FailureText)(NoOwningSessionError.instance), NoOwningSessionError.instance.message)
      const locked = SessionLogError.fromReason({ method: "append", session: "s", reason: new Locked({ detail: path }) })
      assert.notInclude(Schema.encodeSync(TodoWrite.FailureText)(locked), path)
      const refused = SessionLogError.fromReason({
        method: "append",
        session: "s",
        reason: new InvariantViolation({ rule: "no secrets", detail: "todos[0].content holds a key" })
      })
      assert.strictEqual(
        Schema.encodeSync(TodoWrite.FailureText)(refused),
        `todo_write could not save the list: the session log's rule "no secrets" refused it (todos[0].content holds a key), so nothing was saved. Fix the list and send the ENTIRE list again.`
      )
      const corrupt = SessionLogError.fromReason({ method: "append", reason: new Corrupt({ line: 7, detail: path }) })
      assert.include(Schema.encodeSync(TodoWrite.FailureText)(corrupt), "retrying will not help")
      assert.notInclude(Schema.encodeSync(TodoWrite.FailureText)(corrupt), path)
      const success = { todos: [{ content: "a", status: "completed" as const }], counts: { pending: 0, in_progress: 0, completed: 1 } }
      assert.strictEqual(Schema.encodeSync(TodoWrite.SuccessText)(success), "Updated todo list: 0 pending, 0 in progress, 1 completed.")
      assert.isTrue(Exit.isFailure(Schema.decodeUnknownExit(TodoWrite.SuccessText)("Updated todo list: 0 pending, 0 in progress, 1 completed.")))
      assert.isTrue(Exit.isFailure(Schema.decodeUnknownExit(TodoWrite.FailureText)(violation.message)))
    })
  })

  const NearArgs = Schema.Struct({
    todos: Schema.Array(Schema.Struct({
      content: Schema.Union([Schema.String, Schema.Literals(["a", " a ", "A"])]),
      status: Schema.Union([Schema.Literals(["pending", "in_progress", "completed"]), Schema.String])
    })).check(Schema.isMaxLength(5))
  })

  it.effect.prop(
    "for any arguments, succeeds or fails with a typed, coded error, never a defect",
    { input: Schema.Union([NearArgs, Schema.Json]) },
    ({ input }) =>
      Effect.gen(function*() {
        const exit = yield* Effect.exit(TodoWrite.execute(input))
        if (Exit.isFailure(exit)) {
          assert.isFalse(Cause.hasDies(exit.cause))
          const error = failureOf(exit)
          assert.strictEqual(error._tag, "TodoValidationError")
          if (error._tag === "TodoValidationError") assert.isAbove(error.violations.length, 0)
        }
        const written = yield* readAll(yield* SessionLog.SessionLog, session)
        assert.strictEqual(written.length, Exit.isSuccess(exit) ? 1 : 0)
      }).pipe(AgentSession.provide(session), Effect.provide(env(false))),
    { arbitrary: { runs: 100 } }
  )

  describe("in an agent loop", () => {
    // A scripted model: each step answers with the next canned response and records the prompt it got.
    const scripted = (steps: ReadonlyArray<ReadonlyArray<unknown>>, prompts: Ref.Ref<Array<Prompt.Prompt>>) =>
      Layer.effect(
        LanguageModel.LanguageModel,
        Effect.gen(function*() {
          const step = yield* Ref.make(0)
          return yield* LanguageModel.make({
            generateText: (options) =>
              Effect.gen(function*() {
                yield* Ref.update(prompts, (all) => [...all, options.prompt])
                const i = yield* Ref.getAndUpdate(step, (n) => n + 1)
                return steps[i] as any
              }),
            streamText: () => Stream.empty
          })
        })
      )
    const usage = { inputTokens: {}, outputTokens: {} }
    const call = (id: string, todos: unknown) => ({ type: "tool-call", id, name: "todo_write", params: { todos } })

    it.effect("writes through the toolkit inside a turn, returns an invalid call's error to the model, and goes on", () =>
      Effect.gen(function*() {
        const prompts = yield* Ref.make<Array<Prompt.Prompt>>([])
        const steps = [
          [call("c1", [{ content: "Read", status: "in_progress" }, { content: "Write", status: "pending" }]), {
            type: "finish",
            reason: "tool-calls",
            usage
          }],
          [call("c2", [{ content: "Read", status: "in_progress" }, { content: "Write", status: "in_progress" }]), {
            type: "finish",
            reason: "tool-calls",
            usage
          }],
          [call("c3", [{ content: "Read", status: "completed" }, { content: "Write", status: "in_progress" }]), {
            type: "finish",
            reason: "tool-calls",
            usage
          }],
          [{ type: "text", text: "Done." }, { type: "finish", reason: "stop", usage }]
        ]
        const results = yield* Effect.gen(function*() {
          const toolkit = yield* TodoWrite.toolkitFromPolicy
          let prompt = Prompt.make("Read then write")
          const results: Array<{ readonly isFailure: boolean; readonly result: unknown }> = []
          for (let i = 0; i < 10; i++) {
            const response = yield* LanguageModel.generateText({ prompt, toolkit })
            results.push(...response.toolResults)
            prompt = Prompt.concat(prompt, Prompt.fromResponseParts(response.content))
            if (response.finishReason === "stop") break
          }
          return results
        }).pipe(AgentSession.turn(session), Effect.provide(scripted(steps, prompts)))

        assert.deepStrictEqual(results.map((r) => r.isFailure), [false, true, false])
        const rejected = results[1]!.result as {
          _tag: string
          message: string
          violations: ReadonlyArray<{ code: string }>
        }
        assert.strictEqual(rejected._tag, "TodoValidationError")
        assert.strictEqual(rejected.violations[0]!.code, "too_many_in_progress")

        // the model saw the error as a tool result in its next prompt
        const third = (yield* Ref.get(prompts))[2]!
        const toolParts = third.content.flatMap((m) => m.role === "tool" ? m.content : [])
        const failed = toolParts.find((p) => p.type === "tool-result" && p.id === "c2")
        assert.isTrue(failed !== undefined && failed.type === "tool-result" && failed.isFailure)
        // ...as the message text, not the encoded error object
        assert.strictEqual(failed?.type === "tool-result" ? failed.result : undefined, rejected.message)

        const log = yield* SessionLog.SessionLog
        const entries = yield* readAll(log, session)
        assert.deepStrictEqual(entries.map((e) => e.type), ["turn/start", "todo/write", "todo/write", "turn/end"])
        assert.deepStrictEqual(entries[3]!.data, { reason: "completed" })
        const store = yield* ProjectionStore.ProjectionStore
        assert.deepStrictEqual(yield* store.get(TodoProjection.todos, session), [
          { content: "Read", status: "completed" },
          { content: "Write", status: "in_progress" }
        ])
      }).pipe(Effect.provide(env(false))))

    it.effect("the model reads one line of counts after a successful write; the program gets the typed result", () =>
      Effect.gen(function*() {
        const prompts = yield* Ref.make<Array<Prompt.Prompt>>([])
        const steps = [[call("c1", [{ content: "a", status: "in_progress" }, { content: "b", status: "pending" }]), {
          type: "finish",
          reason: "tool-calls",
          usage
        }]]
        const toolkit = yield* TodoWrite.toolkitFromPolicy
        const response = yield* LanguageModel.generateText({ prompt: "go", toolkit }).pipe(
          AgentSession.provide(session),
          Effect.provide(scripted(steps, prompts))
        )
        const [result] = response.toolResults
        assert.strictEqual(result?.encodedResult, "Updated todo list: 1 pending, 1 in progress, 0 completed.")
        assert.deepStrictEqual(result?.result, {
          todos: [{ content: "a", status: "in_progress" }, { content: "b", status: "pending" }],
          counts: { pending: 1, in_progress: 1, completed: 0 }
        })
      }).pipe(Effect.provide(env(false))))

    it.effect("the model reads a short hint after a write with pending work and nothing in_progress", () =>
      Effect.gen(function*() {
        const handlers = yield* TodoWrite.toolkit({ allowParallelInProgress: false })
        const results = yield* Stream.runCollect(
          yield* handlers.handle("todo_write", { todos: [{ content: "a", status: "completed" }, { content: "b", status: "pending" }] })
        )
        assert.strictEqual(
          results[0]!.encodedResult,
          "Updated todo list: 1 pending, 0 in progress, 1 completed. Hint: mark your current step in_progress."
        )
      }).pipe(AgentSession.provide(session), Effect.provide(env(false))))

    it.effect("reports every problem of a call in one tool result, shape and rules together", () =>
      Effect.gen(function*() {
        const handlers = yield* TodoWrite.toolkit({ allowParallelInProgress: false })
        const results = yield* Stream.runCollect(
          yield* handlers.handle("todo_write", {
            todos: fiveProblems
          })
        )
        assert.isTrue(results[0]!.isFailure)
        const error = results[0]!.result as TodoWriteError.TodoValidationError
        assert.deepStrictEqual(error.violations.map((v) => v.code), [
          "excess_property",
          "invalid_status",
          "duplicate_content",
          "empty_content",
          "too_many_in_progress"
        ])
      }).pipe(AgentSession.provide(session), Effect.provide(env(false))))

    it.effect("rejects excess keys through the toolkit instead of stripping them", () =>
      Effect.gen(function*() {
        const handlers = yield* TodoWrite.toolkit({ allowParallelInProgress: false })
        const results = yield* Stream.runCollect(
          yield* handlers.handle("todo_write", { todos: [{ content: "a", status: "pending", priority: "high" }] })
        )
        assert.isTrue(results[0]!.isFailure)
        assert.deepStrictEqual((results[0]!.result as any).violations[0].path, ["todos", 0, "priority"])
        assert.deepStrictEqual(yield* (yield* SessionLog.SessionLog).sessions, [])
      }).pipe(AgentSession.provide(session), Effect.provide(env(false))))
  })
})
