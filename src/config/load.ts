import { readFile } from 'node:fs/promises';
import path from 'node:path';
import Ajv, { type ErrorObject } from 'ajv';
import addFormats from 'ajv-formats';
import { parse as parseYaml } from 'yaml';
import { CronExpressionParser } from 'cron-parser';
import schema from '../../config/gateway.schema.json';
import { dlpPatternProblem } from './dlp-pattern';
import { interpolate } from './interpolate';
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

/** Formats an AJV instance path (/organizations/0/users/1/role) as organizations[0].users[1].role. */
export function jsonPointerToPath(pointer: string): string {
  if (pointer === '') return '(root)';
  return pointer
    .split('/')
    .slice(1)
    .map((seg) => seg.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((acc, seg) => (/^\d+$/.test(seg) ? `${acc}[${seg}]` : acc === '' ? seg : `${acc}.${seg}`), '');
}

function describe(error: ErrorObject): string {
  let at = jsonPointerToPath(error.instancePath);
  const params = error.params as Record<string, unknown>;
  if (error.keyword === 'additionalProperties') {
    const extra = String(params['additionalProperty']);
    at = at === '(root)' ? extra : `${at}.${extra}`;
    return `${at}: unknown key`;
  }
  if (error.keyword === 'required') {
    const missing = String(params['missingProperty']);
    return `${at === '(root)' ? missing : `${at}.${missing}`}: is required`;
  }
  if (error.keyword === 'enum') {
    return `${at}: must be one of ${(params['allowedValues'] as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
  }
  return `${at}: ${error.message ?? 'is invalid'}`;
}

// Compiled once per process: config validation is start-up work, never per request.
let validateConfig: ReturnType<Ajv['compile']> | undefined;
function validator(): ReturnType<Ajv['compile']> {
  if (!validateConfig) {
    const ajv = new Ajv({ allErrors: true, useDefaults: true, coerceTypes: true, strict: false });
    addFormats(ajv);
    validateConfig = ajv.compile(schema);
  }
  return validateConfig;
}

/** Checks the schema cannot express: references between sections, cron syntax. */
function crossCheck(config: GatewayConfig): string[] {
  const problems: string[] = [];
  const modelIds = new Set(config.models.map((m) => m.id));
  config.models.forEach((model, i) => {
    if (!config.providers[model.provider]) problems.push(`models[${i}].provider: no provider named "${model.provider}"`);
  });
  const seenModels = new Set<string>();
  config.models.forEach((model, i) => {
    if (seenModels.has(model.id)) problems.push(`models[${i}].id: duplicate model id "${model.id}"`);
    seenModels.add(model.id);
  });
  if (config.evaluation.model && !modelIds.has(config.evaluation.model)) {
    problems.push(`evaluation.model: no model with id "${config.evaluation.model}"`);
  }
  const orgs = new Map(config.organizations.map((o) => [o.id, o]));
  const seenAgents = new Set<string>();
  config.agents.forEach((agent, i) => {
    const at = `agents[${i}]`;
    if (seenAgents.has(agent.id)) problems.push(`${at}.id: duplicate agent id`);
    seenAgents.add(agent.id);
    const org = orgs.get(agent.organization);
    if (!org) {
      problems.push(`${at}.organization: no organization "${agent.organization}"`);
    } else {
      if (!org.users.some((u) => u.id === agent.createdBy)) {
        problems.push(`${at}.createdBy: no user "${agent.createdBy}" in organization "${org.id}"`);
      }
      agent.sharedWith.forEach((share, j) => {
        if (share.user && !org.users.some((u) => u.id === share.user)) {
          problems.push(`${at}.sharedWith[${j}].user: no user "${share.user}" in organization "${org.id}"`);
        }
        if (share.group && !org.groups.some((g) => g.id === share.group)) {
          problems.push(`${at}.sharedWith[${j}].group: no group "${share.group}" in organization "${org.id}"`);
        }
      });
    }
    if (!modelIds.has(agent.model)) problems.push(`${at}.model: no model with id "${agent.model}"`);
    const labels = new Set<string>();
    agent.inputs.forEach((input, j) => {
      if (labels.has(input.label)) problems.push(`${at}.inputs[${j}].label: duplicate label "${input.label}"`);
      labels.add(input.label);
    });
    agent.triggers.forEach((trigger, j) => {
      if (trigger.type !== 'schedule') return;
      try {
        CronExpressionParser.parse(trigger.cron, trigger.timezone ? { tz: trigger.timezone } : {});
        if (trigger.cron.trim().split(/\s+/).length < 5) throw new Error('expected 5 or 6 fields');
      } catch (err) {
        problems.push(`${at}.triggers[${j}].cron: invalid cron expression "${trigger.cron}" (${(err as Error).message})`);
      }
    });
  });
  const seenUsers = new Map<string, string>();
  config.organizations.forEach((org, i) => {
    org.users.forEach((user, j) => {
      const other = seenUsers.get(user.id);
      if (other !== undefined) problems.push(`organizations[${i}].users[${j}].id: user "${user.id}" also in organization "${other}"`);
      seenUsers.set(user.id, org.id);
    });
    org.groups.forEach((group, j) => {
      group.members.forEach((member, k) => {
        if (!org.users.some((u) => u.id === member)) {
          problems.push(`organizations[${i}].groups[${j}].members[${k}]: no user "${member}" in organization "${org.id}"`);
        }
      });
    });
    org.dlp?.custom.forEach((custom, j) => {
      const problem = dlpPatternProblem(custom.pattern);
      if (problem !== null) problems.push(`organizations[${i}].dlp.custom[${j}].pattern: ${problem}`);
    });
  });
  return problems;
}

/** Parses, interpolates and validates a config document; throws ConfigError listing every problem by path. */
export function parseConfig(text: string, env: NodeJS.ProcessEnv = process.env, source = 'config'): GatewayConfig {
  let raw: unknown;
  try {
    raw = parseYaml(text) ?? {};
  } catch (err) {
    throw new ConfigError(`${source}: not valid YAML: ${(err as Error).message.split('\n')[0]}`);
  }
  const doc = interpolate(raw, env) as Record<string, unknown>;
  // Unset key variables interpolate to "": those keys simply do not exist.
  for (const org of (Array.isArray(doc['organizations']) ? doc['organizations'] : []) as Record<string, unknown>[]) {
    for (const user of (Array.isArray(org?.['users']) ? org['users'] : []) as Record<string, unknown>[]) {
      if (Array.isArray(user?.['keys'])) user['keys'] = (user['keys'] as unknown[]).filter((k) => k !== '');
    }
  }
  // A provider whose `enabled` interpolated to "" (e.g. `${OPENAI_API_KEY:+true}` with the key unset) is off.
  const providers = (doc['providers'] ?? {}) as Record<string, Record<string, unknown>>;
  const disabled = new Set<string>();
  for (const [name, provider] of Object.entries(providers)) {
    const enabled = provider?.['enabled'];
    if (enabled === '' || enabled === false || enabled === 'false') disabled.add(name);
    if (provider && typeof provider === 'object') delete provider['enabled'];
  }
  for (const name of disabled) delete providers[name];
  if (Array.isArray(doc['models']) && disabled.size > 0) {
    doc['models'] = (doc['models'] as Record<string, unknown>[]).filter((m) => !disabled.has(String(m?.['provider'])));
  }
  const validate = validator();
  if (!validate(doc)) {
    const problems = (validate.errors ?? []).map(describe);
    const unique = [...new Set(problems)];
    throw new ConfigError(`${source}: ${unique.join('; ')}`, unique);
  }
  const config = doc as unknown as GatewayConfig;
  if (env['PORT']) {
    const port = Number(env['PORT']);
    if (!/^\d+$/.test(env['PORT']) || port > 65535) throw new ConfigError(`PORT: must be an integer from 0 to 65535, got "${env['PORT']}"`);
    config.server.port = port;
  }
  if (env['HOST']) config.server.host = env['HOST'];
  for (const org of config.organizations) org.name ??= org.id;
  for (const org of config.organizations) for (const user of org.users) user.name ??= user.id;
  const problems = crossCheck(config);
  if (problems.length > 0) throw new ConfigError(`${source}: ${problems.join('; ')}`, problems);
  return config;
}

export async function loadConfig(file: string, env: NodeJS.ProcessEnv = process.env): Promise<GatewayConfig> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new ConfigError(`cannot read config file ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  return parseConfig(text, env, path.relative(process.cwd(), file) || file);
}
