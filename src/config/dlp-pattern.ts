// Custom DLP patterns (organizations[].dlp.custom[].pattern) are RE2 syntax and run on re2js, a pure
// JavaScript port of RE2: matching takes time linear in the text whatever the pattern, so a pattern
// such as `(a+)+$` cannot stall the event loop (and with it every tenant) the way it does on V8's
// backtracking engine. RE2 has no lookaround or backreferences; such a pattern is refused by
// `config check` and at start-up, with RE2's reason. Why re2js over the alternatives: `re2` (native
// bindings) needs a compile or a prebuilt download at install, which npm does not run unapproved and
// which fails where only the npm registry is reachable; `re2-wasm` is unmaintained; a ReDoS checker
// on V8 regexes (safe-regex, recheck) only estimates, and misses polynomial (e.g. quadratic) cases.
//
// Loaded with the first custom pattern: ~0.26 MB of source that V8 keeps in the heap, with its compiled
// code, for the life of a process that loaded it, which a gateway without custom patterns never needs.
import type { RE2JS } from 're2js';

/** The compiled pattern; throws (with RE2's reason) when RE2 cannot run it. */
export function compileDlpPattern(pattern: string): RE2JS {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return (require('re2js') as typeof import('re2js')).RE2JS.compile(pattern);
}

/** Why `pattern` cannot be a custom DLP pattern, or null when it can. */
export function dlpPatternProblem(pattern: string): string | null {
  try {
    compileDlpPattern(pattern);
    return null;
  } catch (err) {
    return `not a linear-time (RE2) pattern: ${(err as Error).message}; lookaround and backreferences are not supported`;
  }
}
