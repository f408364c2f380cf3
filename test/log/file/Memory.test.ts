/**
 * A million-event session file, read two ways, with what it costs counted:
 * - a whole read streams it: the memory that stays alive (JS heap, ArrayBuffers and external memory,
 *   where Node's Buffers live) stays a few chunks, sampled every 10,000 entries;
 * - a read from a late seq finds its line with a handful of small probes (interpolation search) and
 *   then reads only the tail: the bytes read are counted through the FileSystem.
 */
import { NodeServices } from "@effect/platform-node"
import { assert, layer } from "@effect/vitest"
import { Context, Effect, FileSystem, Layer, Stream } from "effect"
import * as SessionFile from "../../../src/log/file/Format.ts"
import * as SessionLogFile from "../../../src/log/file/SessionLogFile.ts"
import * as SessionId from "../../../src/log/SessionId.ts"
import * as SessionLog from "../../../src/log/SessionLog.ts"
import * as Recording from "./RecordingFileSystem.ts"

const session = SessionId.decodeSync("million")
const events = 1_000_000

/** A directory holding one session of a million events, and the byte offset where each seq's line starts. */
class MillionEvents extends Context.Service<MillionEvents, {
  readonly directory: string
  readonly size: number
  readonly offsets: Float64Array
}>()("test/MillionEvents") {
  static readonly layer = Layer.effect(
    MillionEvents,
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const directory = yield* fs.makeTempDirectoryScoped({ prefix: "todo-write-million-" })
      const file = yield* fs.open(`${directory}/${SessionFile.fileName(session)}`, { flag: "w" })
      const header = SessionFile.headerLine(session, 0)
      yield* file.writeAll(header)
      const offsets = new Float64Array(events)
      let offset = header.length
      const batch = 50_000
      for (let start = 0; start < events; start += batch) {
        let text = ""
        for (let seq = start; seq < start + batch; seq++) {
          offsets[seq] = offset
          const line = SessionFile.entryLine("tick", seq, 0, `{"n":${seq}}`)
          offset += line.length // ASCII: one byte per character
          text += line
        }
        yield* file.writeAll(SessionFile.encodeLines(text))
      }
      return { directory, size: offset, offsets }
    }).pipe(Effect.provide(NodeServices.layer))
  ).pipe(Layer.provideMerge(NodeServices.layer))
}

const gc = (globalThis as { gc?: () => void }).gc

/** Memory in use, on and off the JS heap (Node's Buffers are ArrayBuffers and external memory). */
const inUse = () => {
  const usage = process.memoryUsage()
  return usage.heapUsed + usage.arrayBuffers + usage.external
}

const withLog = <A, E>(
  directory: string,
  fileSystem: Layer.Layer<FileSystem.FileSystem>,
  body: (log: SessionLog.Service) => Effect.Effect<A, E>
) =>
  Effect.flatMap(SessionLog.SessionLog, body).pipe(
    Effect.provide(SessionLogFile.layerFileSystem({ directory }).pipe(
      Layer.provide(Layer.merge(NodeServices.layer, fileSystem))
    ))
  )

layer(MillionEvents.layer, { timeout: "120 seconds" })("SessionLogFile reading a million-event session", (it) => {
  it.effect("a whole read streams: heap + ArrayBuffers + external memory stay a few chunks, sampled every 10,000 entries", () =>
    Effect.gen(function*() {
      const { directory, size } = yield* MillionEvents
      assert.isFunction(gc, "vitest runs with --expose-gc")
      // Reading holds a chunk (256 KiB) or two and what is decoded from them, never the file (or its lines).
      const bound = Math.min(size / 10, 16 * 1024 * 1024)
      gc!()
      const baseline = inUse()
      let peak = 0
      let samples = 0
      const count = yield* withLog(directory, NodeServices.layer, (log) =>
        log.read(session).pipe(
          Stream.runFold(() => 0, (n, entry) => {
            if (entry.seq % 10_000 === 0) {
              samples++
              let growth = inUse() - baseline
              // Above the bound, only what survives a collection counts: garbage is not retention.
              if (growth > bound) {
                gc!()
                growth = inUse() - baseline
              }
              peak = Math.max(peak, growth)
            }
            return n + 1
          })
        ))
      assert.strictEqual(count, events)
      assert.strictEqual(samples, events / 10_000)
      assert.isAtMost(peak, bound, `peak retained memory growth ${peak} bytes while reading a ${size}-byte file`)
    }), 120_000)

  it.effect("a read from a late seq probes a few KiB (interpolation search), then reads only the tail", () =>
    Effect.gen(function*() {
      const { directory, size, offsets } = yield* MillionEvents
      for (const fromSeq of [999_990, 876_543, 500_000, 123_457, 1]) {
        const recorder = Recording.make()
        // The first few entries: enough to see where the scan starts.
        const entries = yield* withLog(directory, recorder.layer, (log) =>
          Stream.runCollect(Stream.take(log.read(session, { fromSeq }), 20)))
        assert.deepStrictEqual(entries.map((e) => e.seq), Array.from({ length: Math.min(20, events - fromSeq) }, (_, i) => fromSeq + i))
        // Probes ask for a few KiB; the scan reads whole 256 KiB chunks (through a stream or readAlloc).
        const isScan = (e: Recording.Event) =>
          e.op === "stream" || e.op === "readFile" || (e.op === "readAlloc" && e.requested! >= 256 * 1024)
        const probes = recorder.events.filter((e) => e.op === "readAlloc" && !isScan(e))
        const probed = probes.reduce((n, e) => n + e.bytes!, 0)
        const reads = recorder.events.filter(isScan)
        const scanFrom = reads[0] !== undefined && reads[0].op !== "readFile" ? reads[0].offset! : 0
        const line = offsets[fromSeq]!
        const where = `from seq ${fromSeq} (at byte ${line}): ${probes.length} probes of ${probed} bytes, then a scan from byte ${scanFrom}`
        // Bisecting a 75 MB file down to one 4 KiB probe takes ~14 probes; interpolation over lines
        // of similar size lands in a few.
        assert.isAtMost(probes.length, 8, `${where}: the search is not interpolating`)
        assert.isAtMost(probed, probes.length * 4096, where)
        assert.isBelow(probed, size / 1000, `${where}: the search is far below a scan of ${size} bytes`)
        // The scan starts at most one probe's width before the line asked for.
        assert.isAtMost(scanFrom, line, where)
        assert.isAtLeast(scanFrom, line - 4096, `${where}: the read scanned lines before the one asked for`)
        if (fromSeq === 999_990) {
          const read = reads.reduce((n, e) => n + e.bytes!, 0)
          assert.isBelow(probed + read, size / 1000, `${where}: ${read} bytes scanned`)
        }
      }
    }), 120_000)
})
