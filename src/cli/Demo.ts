/**
 * `todo-write demo`: the scripted agent of `npm start`, then a replay of its log.
 */
import * as Clock from "effect/Clock"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as FileSystem from "effect/FileSystem"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Path from "effect/Path"
import * as SessionLogFile from "../log/file/SessionLogFile.ts"
import * as ProjectionStore from "../projection/ProjectionStore.ts"
import * as TodoPolicy from "../todo/TodoPolicy.ts"
import * as TodoWrite from "../todo/TodoWrite.ts"
import * as DemoScript from "./DemoScript.ts"
import * as SessionArgument from "./SessionArgument.ts"
import * as Show from "./Show.ts"
import * as Store from "./Store.ts"

/** The command's input, as `Cli.ts` parses it. */
export interface Input {
  readonly dir: Option.Option<string>
}

/** Runs the scripted agent on a new session in `dir` (or a new temporary directory), then replays it. */
export const run = ({ dir }: Input) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const target = Option.isSome(dir) ? dir.value : yield* fs.makeTempDirectory({ prefix: "todo-write-demo-" })
    const path = yield* Path.Path
    const session = yield* SessionArgument.decode(`demo-${yield* Clock.currentTimeMillis}`)
    yield* Console.log(`A scripted agent (a fake LanguageModel, no network) uses todo_write, single-active policy.`)
    yield* Console.log(`Session log: ${SessionLogFile.fileOf(path, target, session)}`)
    yield* Store.reported(Effect.gen(function*() {
      yield* DemoScript.run(session)
      yield* Console.log(`\n== Replayed from the log: todo-write show --dir ${target} --history turns ${session}\n`)
      yield* Show.printSession(session, Option.some("turns"), false, target)
    }).pipe(
      Effect.provide(
        Layer.mergeAll(TodoWrite.layer, ProjectionStore.layer).pipe(
          Layer.provideMerge(Layer.mergeAll(Store.fileLog(target), TodoPolicy.layer({ allowParallelInProgress: false })))
        )
      )
    ), `the demo in ${target}`)
  })
