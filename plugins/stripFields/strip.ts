import type { UpstreamBodyTransform } from '../../src/pipeline/context';

/**
 * A transform deleting the given top-level fields. Built once at boot; it reports whether it changed
 * the body so an untouched body can still go upstream as the caller's original bytes.
 */
export function fieldStripper(fields: readonly string[]): UpstreamBodyTransform {
  const names = [...new Set(fields)];
  return function stripFields(body) {
    let changed = false;
    for (const name of names) {
      if (Object.hasOwn(body, name)) {
        delete body[name];
        changed = true;
      }
    }
    return changed;
  };
}
