import * as SessionLog from "../../src/log/SessionLog.ts"
import { conformance } from "./SessionLogConformance.ts"

conformance("memory", () => SessionLog.layerMemory)
