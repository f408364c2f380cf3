/**
 * A probe, not a benchmark: what a `postMessage` costs the thread that posts it, when the receiving
 * thread sleeps (waiting in its event loop) and when it spins (polling with `receiveMessageOnPort`,
 * never asleep). The difference is the wake-up: on a VM it is a system call that sends an
 * inter-processor interrupt, which the hypervisor makes expensive. The journal's I/O thread is
 * woken this way by every group of batches and every commit (`IoThread`).
 *
 * `npx node scratch/bench/experiments/threadWake.mjs [gap-ms]`: posts one small message every
 * `gap-ms` (default 0.3, busy-waiting between, so the receiver falls asleep when it is allowed to),
 * and reports this thread's CPU per post beyond the busy-waiting, for each receiver in turn.
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
  let waited = 0
  const start = process.threadCpuUsage()
  for (let i = 0; i < posts; i++) {
    port.postMessage(i)
    const t = performance.now()
    while (performance.now() - t < gap);
    waited += performance.now() - t
  }
  const used = process.threadCpuUsage(start)
  port.postMessage(-1)
  await new Promise((resolve) => worker.once("exit", resolve))
  return (used.user + used.system - waited * 1000) / posts
}

for (let round = 0; round < 3; round++) {
  const asleep = await measure(false)
  const spinning = await measure(true)
  console.log(
    `receiver asleep: ${asleep.toFixed(1)} µs of the poster's CPU per post; spinning: ${spinning.toFixed(1)} µs (gap ${gap} ms)`
  )
}
