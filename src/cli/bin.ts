#!/usr/bin/env node
/**
 * The `todo-write` executable: the one place that runs an Effect program.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { Effect, Layer, Logger } from "effect"
import { Command } from "effect/cli"
import * as Cli from "./Cli.ts"
import * as Output from "./Output.ts"

Command.run(Cli.command, { version: Cli.version }).pipe(
  // stdout carries JSON-RPC under `serve`: logs go to stderr.
  Effect.provide(Layer.mergeAll(NodeServices.layer, Layer.succeed(Logger.LogToStderr, true), Output.layer)),
  NodeRuntime.runMain
)
