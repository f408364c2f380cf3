import fs from "node:fs"
import { syncBuiltinESMExports } from "node:module"
const orig = fs.lstatSync
let n = 0, ns = 0n
;(fs as any).lstatSync = function(...args: any[]) { const t = process.hrtime.bigint(); try { return (orig as any).apply(fs, args) } finally { ns += process.hrtime.bigint() - t; n++ } }
syncBuiltinESMExports()
process.on("exit", () => console.log(`lstat calls ${n}, mean ${(Number(ns) / n / 1000).toFixed(2)} µs`))
await import("./manyAppendCpu.ts")
