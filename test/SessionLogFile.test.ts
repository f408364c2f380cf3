import { NodeServices } from "@effect/platform-node"
import { Effect, FileSystem, Layer } from "effect"
import * as SessionLogFile from "../src/SessionLogFile.ts"
import { conformance } from "./SessionLogConformance.ts"

/** A fresh backend over a temporary directory that is removed afterwards. */
export const tempBackend = () =>
  Layer.unwrap(Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const directory = yield* fs.makeTempDirectoryScoped({ prefix: "todo-write-" })
    return SessionLogFile.layerFileSystem({ directory })
  })).pipe(Layer.provide(NodeServices.layer))

conformance("JSONL files", tempBackend)
