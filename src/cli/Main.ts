/**
 * The `todo-write` program: the command line run on Node, its logs on stderr and its errors as
 * `Output.ts` prints them. `bin.ts` imports this once Node's compile cache is on.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeServices from "@effect/platform-node/NodeServices"
import * as Command from "effect/cli/Command"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Cli from "./Cli.ts"
import * as Output from "./Output.ts"

Command.run(Cli.command, { version: Cli.version }).pipe(
  Effect.provide(Layer.mergeAll(NodeServices.layer, Output.layer)),
  NodeRuntime.runMain
)
