/**
 * A probe for the next attempt at the I/O thread (see the bench README, 2026-12-02): what handing a
 * batch to another thread costs the event loop's thread, by `postMessage` (one message per batch, its
 * bytes in a transferred buffer) against a `SharedArrayBuffer` ring (the bytes copied in, an
 * `Atomics.notify` only when the thread sleeps). The thread does what it would: an `lstat` and a write
 * per batch, to a file on a tmpfs (or nothing, for the hand-off alone; a ring that fills makes the event
 * loop's thread wait, which counts). Run: `npx node scratch/bench/experiments/ringHandOff.mjs`.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { join } from "node:path"
import { Worker } from "node:worker_threads"

const dir = mkdtempSync(join("/dev/shm", "ring-"))
const N = 20_000
const size = 900
const slots = 1024
const slot = 1024
const batch = new Uint8Array(size).fill(120)

const threadSource = `
const { parentPort, workerData } = require("node:worker_threads")
const fs = require("node:fs")
const file = workerData.dir + "/s.jsonl"
const fd = fs.openSync(file, "a")
const work = workerData.calls ? (bytes) => { fs.lstatSync(file); fs.writeSync(fd, bytes); fs.lstatSync(file) } : () => {}
if (workerData.mode === "post") {
  let n = 0
  parentPort.on("message", (m) => { if (m === "done?") parentPort.postMessage(n); else { work(new Uint8Array(m)); n++ } })
} else {
  const control = new Int32Array(workerData.control) // [0] written, [1] read, [2] sleeping
  const data = new Uint8Array(workerData.data)
  for (;;) {
    const written = Atomics.load(control, 0)
    let read = control[1]
    if (read === written) {
      Atomics.store(control, 2, 1)
      if (Atomics.load(control, 0) === read) Atomics.wait(control, 0, read)
      Atomics.store(control, 2, 0)
      continue
    }
    while (read < written) { const at = (read % ${slots}) * ${slot}; work(data.subarray(at, at + ${size})); read++ }
    Atomics.store(control, 1, read)
  }
}`

const cpu = () => { const c = process.threadCpuUsage(); return c.user + c.system }

const post = async (calls) => {
  const worker = new Worker(threadSource, { eval: true, workerData: { dir, mode: "post", calls } })
  const c0 = cpu()
  for (let i = 0; i < N; i++) {
    const own = new Uint8Array(size)
    own.set(batch)
    worker.postMessage(own.buffer, [own.buffer])
    if (i % 128 === 127) await new Promise((resolve) => setImmediate(resolve))
  }
  const used = (cpu() - c0) / N
  worker.postMessage("done?")
  await new Promise((resolve) => worker.once("message", resolve))
  await worker.terminate()
  return used
}

const ring = async (calls) => {
  const control = new Int32Array(new SharedArrayBuffer(12))
  const data = new Uint8Array(new SharedArrayBuffer(slots * slot))
  const worker = new Worker(threadSource, { eval: true, workerData: { dir, mode: "ring", calls, control: control.buffer, data: data.buffer } })
  const c0 = cpu()
  for (let i = 0; i < N; i++) {
    while (i - Atomics.load(control, 1) >= slots) await new Promise((resolve) => setImmediate(resolve))
    data.set(batch, (i % slots) * slot)
    Atomics.store(control, 0, i + 1)
    if (Atomics.load(control, 2) === 1) Atomics.notify(control, 0)
    if (i % 128 === 127) await new Promise((resolve) => setImmediate(resolve))
  }
  const used = (cpu() - c0) / N
  while (Atomics.load(control, 1) < N) await new Promise((resolve) => setTimeout(resolve, 1))
  await worker.terminate()
  return used
}

try {
  for (let round = 0; round < 3; round++) {
    for (const calls of [false, true]) {
      console.log(`thread ${calls ? "makes the calls" : "does nothing"}: postMessage ${(await post(calls)).toFixed(2)} µs | ring ${(await ring(calls)).toFixed(2)} µs of the event loop's CPU per batch`)
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true })
}
