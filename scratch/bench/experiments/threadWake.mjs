/**
 * A probe, not a benchmark: what a `postMessage` costs the thread that posts it, when the receiving
 * thread sleeps (waiting in its event loop) and when it spins (polling with `receiveMessageOnPort`,
 * never asleep). The difference is the wake-up: on a VM it is a system call that sends an
 * inter-processor interrupt, which the hypervisor makes expensive. The journal's I/O thread is
 * woken this way by every group of batches and every commit (`IoThread`).
 *
 * `npx node scratch/bench/experiments/threadWake.mjs [gap-ms]`: posts one small message every
 * `gap-ms` (default 0.3, busy-waiting between, so the receiver falls asleep when it is allowed to),
 * and reports the median time of the `postMessage` call itself (the wake-up's system call is made
 * inside it), for each receiver in turn. Timing the call, not the thread's CPU less the busy-waiting:
 * with 2 vCPUs and a spinning receiver the poster is pushed off its CPU, which that subtraction
 * can't tell from work.
 */
import { MessageChannel, Worker } from "node:worker_threads"

const gap = Number(process.argv[2] ?? 0.3)
const posts = 2000

const receiver = (spin) => {
  const { port1, port2 } = new MessageChannel()
  const worker = new Worker(
    `const { workerData, receiveMessageOnPort } = require("node:worker_threads")
    const port = workerData.port
    if (workerData.spin) {
      for (;;) {
        const received = receiveMessageOnPort(port)
        if (received !== undefined && received.message === -1) break
      }
      port.close()
    } else {
      port.on("message", (message) => { if (message === -1) port.close() })
    }`,
    { eval: true, workerData: { port: port2, spin }, transferList: [port2] }
  )
  return { port: port1, worker }
}

const measure = async (spin) => {
  const { port, worker } = receiver(spin)
  await new Promise((resolve) => setTimeout(resolve, 300))
  const calls = []
  for (let i = 0; i < posts; i++) {
    const start = process.hrtime.bigint()
    port.postMessage(i)
    calls.push(Number(process.hrtime.bigint() - start) / 1000)
    const t = performance.now()
    while (performance.now() - t < gap);
  }
  port.postMessage(-1)
  await new Promise((resolve) => worker.once("exit", resolve))
  calls.sort((a, b) => a - b)
  return calls[calls.length >> 1]
}

for (let round = 0; round < 3; round++) {
  const asleep = await measure(false)
  const spinning = await measure(true)
  console.log(
    `postMessage, median: ${asleep.toFixed(1)} µs to a receiver asleep, ${spinning.toFixed(1)} µs to one spinning (gap ${gap} ms)`
  )
}
