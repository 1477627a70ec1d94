// `${NAME}`, `${NAME:-default}` and `${NAME:+alternative}` (shell semantics) in any string of the config
// file are replaced from the environment. `:+` lets a section switch on only when a variable is set.
// Interpolation runs on parsed YAML scalars, never on the raw text, so a value can't inject YAML.

const REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::([-+])([^}]*))?\}/g;

export function interpolateString(value: string, env: NodeJS.ProcessEnv): string {
  return value.replace(REFERENCE, (_match, name: string, op: string | undefined, word: string | undefined) => {
    const found = env[name];
    const set = found !== undefined && found !== '';
    if (op === '+') return set ? (word ?? '') : '';
    if (set) return found;
    return op === '-' ? (word ?? '') : '';
  });
}

export function interpolate(value: unknown, env: NodeJS.ProcessEnv): unknown {
  if (typeof value === 'string') return interpolateString(value, env);
  if (Array.isArray(value)) return value.map((item) => interpolate(item, env));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) out[key] = interpolate(item, env);
    return out;
  }
  return value;
}
