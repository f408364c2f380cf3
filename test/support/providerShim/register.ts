/**
 * A Node resolve hook that lets `@effect/ai-openai` and `@effect/ai-anthropic` 4.0.0-beta.106 (the
 * newest v4 releases) load on `effect` 4.1. Upstream's betas import module paths that `effect` 4.0
 * moved: `effect/unstable/{ai,http,encoding,socket}/*` became `effect/{ai,http,encoding,socket}/*`,
 * and `effect/Encoding` was split into `effect/encoding/*`. Test code only: vitest.config.ts passes
 * it to every worker (`--import`); tsconfig.json's `paths` map the same specifiers for the types.
 * Remove it once the providers publish a release built against effect 4.x.
 */
import { registerHooks } from "node:module"

const moved = /^effect\/unstable\/(ai|http|encoding|socket)\/(.+)$/
const encoding = new URL("./Encoding.ts", import.meta.url).href

/** The specifier `effect` 4.1 uses for a beta one, or the specifier unchanged. */
export const map = (specifier: string): string => {
  const match = moved.exec(specifier)
  if (match !== null) return `effect/${match[1]}/${match[2]}`
  return specifier === "effect/Encoding" ? encoding : specifier
}

registerHooks({
  resolve: (specifier, context, nextResolve) => nextResolve(map(specifier), context)
})
