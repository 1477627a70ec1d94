/** Minimal flag parsing for the admin CLI: `--name value` and `--name=value`. */
export function flag(argv: readonly string[], name: string): string | undefined {
  const i = argv.indexOf(`--${name}`);
  if (i >= 0) return argv[i + 1];
  const prefixed = argv.find((a) => a.startsWith(`--${name}=`));
  return prefixed?.slice(name.length + 3);
}

export function positional(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg.startsWith('--')) {
      if (!arg.includes('=')) i++;
      continue;
    }
    out.push(arg);
  }
  return out;
}

/** A one-line, human-readable failure: what the operator sees, then exit 1. */
export class CliError extends Error {}
