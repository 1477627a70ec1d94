// One problem found in a config file: where (a path in the file), what is wrong, and how to fix it.
// `config check` prints them one a line; a start-up failure joins them into its one-line reason.

export interface ConfigProblem {
  /** organizations[0].models[1], or (root), or the file itself for YAML syntax errors. */
  path: string;
  message: string;
  fix: string;
}

export function formatProblem(problem: ConfigProblem): string {
  return `${problem.path}: ${problem.message} (fix: ${problem.fix})`;
}

/** Formats an AJV instance path (/organizations/0/users/1/role) as organizations[0].users[1].role. */
export function jsonPointerToPath(pointer: string): string {
  if (pointer === '') return '(root)';
  return pointer
    .split('/')
    .slice(1)
    .map((seg) => seg.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((acc, seg) => (/^\d+$/.test(seg) ? `${acc}[${seg}]` : acc === '' ? seg : `${acc}.${seg}`), '');
}

/** `parent.key`, or `key` at the root. */
export function childPath(parent: string, key: string): string {
  return parent === '(root)' || parent === '' ? key : `${parent}.${key}`;
}

/** Edits (insert, delete, substitute, swap two neighbours) from a to b: "dmeo" is one swap from "demo". */
function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, d[i - 2]![j - 2]! + 1);
      d[i]![j] = best;
    }
  }
  return d[a.length]![b.length]!;
}

/**
 * "use one of: a, b (did you mean "a"?)": the names that would be valid, the likeliest typo fix
 * first. A long list is cut: the point is to show what kind of value belongs here.
 */
export function oneOf(value: string, candidates: readonly string[], noun = 'one of'): string {
  if (candidates.length === 0) return `there is none: define one first`;
  const close = candidates
    .map((c) => ({ c, d: editDistance(value.toLowerCase(), c.toLowerCase()) }))
    .filter(({ c, d }) => d <= Math.max(1, Math.floor(c.length / 3)))
    .sort((x, y) => x.d - y.d)[0];
  const shown = candidates.slice(0, 12).map((c) => JSON.stringify(c));
  const list = `${noun}: ${shown.join(', ')}${candidates.length > 12 ? ', ...' : ''}`;
  return close ? `did you mean "${close.c}"? (${list})` : `use ${list}`;
}
