import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { compileFunction } from 'node:vm';
import path from 'node:path';
import type { ErrorObject, ValidateFunction } from 'ajv';
import { parseDocument } from 'yaml';
import { CONFIG_CHECKS, type SwitchedOff } from './cross-checks';
import { interpolate } from './interpolate';
import { childPath, formatProblem, jsonPointerToPath, oneOf, type ConfigProblem } from './problems';
import type { GatewayConfig } from './types';

export class ConfigError extends Error {
  constructor(
    message: string,
    readonly problems: string[] = [message],
  ) {
    super(message);
    this.name = 'ConfigError';
  }
}

/** Where the config file is: --config FILE, else GATEWAY_CONFIG, else config/gateway.yaml. */
export function resolveConfigPath(argv: readonly string[], env: NodeJS.ProcessEnv, cwd = process.cwd()): string {
  const flag = argv.indexOf('--config');
  const fromFlag = flag >= 0 ? argv[flag + 1] : argv.find((a) => a.startsWith('--config='))?.slice('--config='.length);
  const chosen = fromFlag ?? env['GATEWAY_CONFIG'] ?? 'config/gateway.yaml';
  return path.resolve(cwd, chosen);
}

function describe(error: ErrorObject): ConfigProblem {
  const at = jsonPointerToPath(error.instancePath);
  const params = error.params as Record<string, unknown>;
  const parent = (error.parentSchema ?? {}) as { properties?: Record<string, unknown>; description?: string };
  if (error.keyword === 'additionalProperties') {
    const extra = String(params['additionalProperty']);
    const known = Object.keys(parent.properties ?? {});
    return {
      path: childPath(at, extra),
      message: 'unknown key',
      fix: known.length > 0 ? `remove it, or ${oneOf(extra, known, 'a key allowed here')}` : 'remove it',
    };
  }
  if (error.keyword === 'required') {
    const missing = String(params['missingProperty']);
    return { path: childPath(at, missing), message: 'is required', fix: `add ${missing}` };
  }
  if (error.keyword === 'enum') {
    const allowed = (params['allowedValues'] as unknown[]).map((v) => JSON.stringify(v)).join(', ');
    return { path: at, message: `must be one of ${allowed}`, fix: `write one of those instead of ${JSON.stringify(error.data)}` };
  }
  if (error.keyword === 'type') {
    return { path: at, message: error.message ?? 'has the wrong type', fix: `write ${String(params['type'])} instead of ${JSON.stringify(error.data)}` };
  }
  const hint = parent.description ? `: ${parent.description}` : '';
  return { path: at, message: error.message ?? 'is invalid', fix: `change the value (${JSON.stringify(error.data)})${hint}` };
}

// Generated at build time from config/gateway.schema.json (openapi/build-artifacts.ts): all errors,
// defaults filled in, values coerced, verbose (each error carries the failing value and its schema).
// Loaded when a configuration is first checked and let go after a file's (loadConfig): a serving
// process checks one file once, and V8 keeps a loaded module's source text (~720 KB, two bytes a
// character) and its compiled code for as long as the module is reachable: 1.4 MB of a serving
// gateway's 24.5 MB idle heap.
let configValidator: ValidateFunction | null = null;

function validatorOfConfig(): ValidateFunction {
  if (configValidator) return configValidator;
  // Compiled here rather than required: a required module stays in the module cache, and is the parent
  // of the ajv runtime modules it requires first (cached for good), either of which would keep it. Its
  // own requires (ajv's runtime modules, by package name) go through this module's require, so those
  // modules belong to this one.
  const file = require.resolve('../generated/config-validator.js');
  const compiled = { exports: {} as unknown };
  compileFunction(readFileSync(file, 'utf8'), ['exports', 'require', 'module'], { filename: file })(compiled.exports, require, compiled);
  configValidator = compiled.exports as ValidateFunction;
  return configValidator;
}

/** YAML syntax errors, each with its line and what that line reads (the parser's code frame is multi-line). */
function yamlProblems(text: string): { doc: unknown; problems: ConfigProblem[] } {
  const parsed = parseDocument(text, { prettyErrors: true });
  const lines = text.split(/\r?\n/);
  const problems = parsed.errors.map((err): ConfigProblem => {
    const where = err.linePos?.[0];
    const message = (err.message.split('\n')[0] ?? '').replace(/ at line \d+, column \d+:?$/, '');
    if (!where) return { path: '(file)', message: `not valid YAML: ${message}`, fix: 'correct the YAML syntax' };
    const line = (lines[where.line - 1] ?? '').trim();
    return { path: `line ${where.line}, column ${where.col}`, message: `not valid YAML: ${message}`, fix: `correct this line: ${JSON.stringify(line)}` };
  });
  return { doc: problems.length === 0 ? parsed.toJS() : null, problems };
}

/** The names of the variables a raw (not yet interpolated) value reads. */
function variablesOf(raw: unknown): string[] {
  return typeof raw === 'string' ? [...raw.matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => m[1]!) : [];
}

/**
 * Providers whose `enabled` interpolated to "" or false (e.g. `${OPENAI_API_KEY:+true}` with the key
 * unset) are off: they and their models leave the document, remembered so references say why.
 */
function switchOff(raw: Record<string, unknown>, doc: Record<string, unknown>): SwitchedOff {
  const switchedOff: SwitchedOff = { providers: new Map(), models: new Map() };
  const rawProviders = (raw['providers'] ?? {}) as Record<string, Record<string, unknown> | null>;
  const providers = (doc['providers'] ?? {}) as Record<string, Record<string, unknown> | null>;
  if (typeof providers !== 'object') return switchedOff;
  for (const [name, provider] of Object.entries(providers)) {
    if (!provider || typeof provider !== 'object') continue;
    const enabled = provider['enabled'];
    delete provider['enabled'];
    if (enabled === '' || enabled === false || enabled === 'false') {
      switchedOff.providers.set(name, variablesOf(rawProviders[name]?.['enabled']));
      delete providers[name];
    }
  }
  if (Array.isArray(doc['models']) && switchedOff.providers.size > 0) {
    doc['models'] = (doc['models'] as Record<string, unknown>[]).filter((m) => {
      const provider = String(m?.['provider']);
      if (!switchedOff.providers.has(provider)) return true;
      if (typeof m?.['id'] === 'string') switchedOff.models.set(m['id'], provider);
      return false;
    });
  }
  return switchedOff;
}

/**
 * Tracing is off without a `telemetry.otlp` block, and off when its `endpoint` interpolated to ""
 * (`endpoint: ${OTEL_TRACES_ENDPOINT:-}` with the variable unset): the block then leaves the document.
 */
function telemetrySwitch(doc: Record<string, unknown>): void {
  const telemetry = doc['telemetry'];
  if (!telemetry || typeof telemetry !== 'object') return;
  const otlp = (telemetry as Record<string, unknown>)['otlp'];
  if (otlp && typeof otlp === 'object' && (otlp as Record<string, unknown>)['endpoint'] === '') delete (telemetry as Record<string, unknown>)['otlp'];
}

function environmentOverrides(doc: Record<string, unknown>, env: NodeJS.ProcessEnv): ConfigProblem[] {
  const server = doc['server'];
  if (!server || typeof server !== 'object') return [];
  const target = server as Record<string, unknown>;
  const problems: ConfigProblem[] = [];
  const port = env['PORT'];
  if (port) {
    if (!/^\d+$/.test(port) || Number(port) > 65535) {
      problems.push({
        path: 'PORT',
        message: `must be an integer from 0 to 65535, got "${port}"`,
        fix: 'set PORT to a port number, or unset it to use server.port',
      });
    } else target['port'] = Number(port);
  }
  if (env['HOST']) target['host'] = env['HOST'];
  return problems;
}

/**
 * Parses, interpolates and validates a config document. Every problem is reported at once, each by its
 * path with its fix: schema errors and cross-references together, so fixing one never reveals another.
 */
export function parseConfig(text: string, env: NodeJS.ProcessEnv = process.env, source = 'config'): GatewayConfig {
  const yaml = yamlProblems(text);
  if (yaml.problems.length > 0) throw configError(source, yaml.problems);
  const raw = (yaml.doc ?? {}) as Record<string, unknown>;
  const doc = interpolate(raw, env) as Record<string, unknown>;
  // Unset key variables interpolate to "": those keys simply do not exist.
  for (const org of (Array.isArray(doc['organizations']) ? doc['organizations'] : []) as Record<string, unknown>[]) {
    for (const user of (Array.isArray(org?.['users']) ? org['users'] : []) as Record<string, unknown>[]) {
      if (Array.isArray(user?.['keys'])) user['keys'] = (user['keys'] as unknown[]).filter((k) => k !== '');
    }
  }
  const switchedOff = switchOff(raw, doc);
  telemetrySwitch(doc);
  const validateConfig = validatorOfConfig();
  const problems = validateConfig(doc) ? [] : (validateConfig.errors ?? []).map(describe);
  problems.push(...environmentOverrides(doc, env));
  for (const check of CONFIG_CHECKS) problems.push(...check({ doc, switchedOff }));
  if (problems.length > 0) throw configError(source, problems);
  const config = doc as unknown as GatewayConfig;
  for (const org of config.organizations) org.name ??= org.id;
  for (const org of config.organizations) for (const user of org.users) user.name ??= user.id;
  return config;
}

function configError(source: string, problems: ConfigProblem[]): ConfigError {
  const lines = [...new Set(problems.map(formatProblem))];
  return new ConfigError(`${source}: ${lines.join('; ')}`, lines);
}

export async function loadConfig(file: string, env: NodeJS.ProcessEnv = process.env): Promise<GatewayConfig> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new ConfigError(`cannot read config file ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  try {
    return parseConfig(text, env, path.relative(process.cwd(), file) || file);
  } finally {
    configValidator = null;
  }
}
