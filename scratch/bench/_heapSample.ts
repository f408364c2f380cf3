import { Session } from "node:inspector/promises"
import { writeFileSync } from "node:fs"
const session = new Session(); session.connect()
await session.post("HeapProfiler.startSampling", { samplingInterval: 512, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true })
await import("./manyAppendCpu.ts")
const { profile } = await session.post("HeapProfiler.stopSampling")
writeFileSync("/tmp/heap.json", JSON.stringify(profile))
