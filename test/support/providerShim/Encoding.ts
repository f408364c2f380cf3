/**
 * Stands in for the betas' `effect/Encoding`, which effect 4.x split into `effect/encoding/*`. The
 * providers call only `encodeBase64` (file and image prompt parts). See register.ts.
 */
import * as Base64 from "effect/encoding/Base64"

export const encodeBase64 = Base64.encode
