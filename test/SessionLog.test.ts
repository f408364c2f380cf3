import * as SessionLog from "../src/SessionLog.ts"
import { conformance } from "./SessionLogConformance.ts"

conformance("memory", () => SessionLog.layerMemory)
