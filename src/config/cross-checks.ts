// What the config schema cannot express: references between sections (models, providers, users,
// groups, organizations), uniqueness, cron syntax, regular expressions. They run on the document even
// when the schema rejected parts of it, so one `config check` reports every problem at once: each
// check reads defensively and leaves a value of the wrong type to the schema's report.
//
// Adding a check is adding one function to CONFIG_CHECKS.
import { cronExpressions } from '../queue/cron';
import { dlpPatternProblem } from './dlp-pattern';
import { oneOf, type ConfigProblem } from './problems';
import { egressProfileUrls, webSearchSettings } from './tool-checks';

type Node = Record<string, unknown>;

function list(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}
function node(value: unknown): Node {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Node) : {};
}
function text(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** Sections switched off at load time, remembered so references to them say why they are gone. */
export interface SwitchedOff {
  /** provider name → the variables its `enabled` value read (e.g. OPENAI_API_KEY). */
  providers: Map<string, string[]>;
  /** model id → the name of its switched-off provider. */
  models: Map<string, string>;
}

export interface CheckInput {
  /** The interpolated document, defaults applied; possibly not schema-valid. */
  doc: Node;
  switchedOff: SwitchedOff;
}

export type ConfigCheck = (input: CheckInput) => ConfigProblem[];

function modelIds(doc: Node): string[] {
  return list(doc['models']).flatMap((m) => text(node(m)['id']) ?? []);
}

/** A reference to a model by id: exists, else why not (a typo, or its provider switched off). */
function modelReference(input: CheckInput, at: string, id: string): ConfigProblem[] {
  const ids = modelIds(input.doc);
  if (ids.includes(id)) return [];
  const provider = input.switchedOff.models.get(id);
  if (provider !== undefined) {
    const variables = input.switchedOff.providers.get(provider) ?? [];
    const because = variables.length > 0 ? `${variables.join(', ')} ${variables.length === 1 ? 'is' : 'are'} not set` : 'its enabled value is false';
    return [
      {
        path: at,
        message: `model "${id}" is switched off: its provider "${provider}" is disabled because ${because}`,
        fix:
          variables.length > 0
            ? `set ${variables.join(' and ')}, or ${oneOf(id, ids, 'a model that is on')}`
            : `enable provider "${provider}", or ${oneOf(id, ids)}`,
      },
    ];
  }
  return [{ path: at, message: `no model with id "${id}"`, fix: oneOf(id, ids, 'a model id from models[]') }];
}

const modelProviders: ConfigCheck = ({ doc }) => {
  const names = Object.keys(node(doc['providers']));
  return list(doc['models']).flatMap((m, i) => {
    const provider = text(node(m)['provider']);
    if (provider === undefined || names.includes(provider)) return [];
    return [{ path: `models[${i}].provider`, message: `no provider named "${provider}"`, fix: oneOf(provider, names, 'a provider from providers') }];
  });
};

const uniqueModelIds: ConfigCheck = ({ doc }) => {
  const seen = new Set<string>();
  return list(doc['models']).flatMap((m, i) => {
    const id = text(node(m)['id']);
    if (id === undefined) return [];
    const duplicate = seen.has(id);
    seen.add(id);
    return duplicate ? [{ path: `models[${i}].id`, message: `duplicate model id "${id}"`, fix: 'give each model its own id' }] : [];
  });
};

const modelReferences: ConfigCheck = (input) => {
  const { doc } = input;
  const problems: ConfigProblem[] = [];
  const judge = text(node(doc['evaluation'])['model']);
  if (judge) problems.push(...modelReference(input, 'evaluation.model', judge));
  list(doc['agents']).forEach((agent, i) => {
    const model = text(node(agent)['model']);
    if (model !== undefined) problems.push(...modelReference(input, `agents[${i}].model`, model));
  });
  // An organization may list a model whose provider is switched off: it simply is not offered then.
  const ids = modelIds(doc);
  list(doc['organizations']).forEach((org, i) => {
    list(node(org)['models']).forEach((model, j) => {
      if (typeof model !== 'string' || model === '*' || ids.includes(model) || input.switchedOff.models.has(model)) return;
      problems.push({
        path: `organizations[${i}].models[${j}]`,
        message: `no model with id "${model}"`,
        fix: oneOf(model, ['*', ...ids], '"*" (every model) or a model id'),
      });
    });
  });
  return problems;
};

const agentReferences: ConfigCheck = ({ doc }) => {
  const problems: ConfigProblem[] = [];
  const orgs = new Map(list(doc['organizations']).flatMap((o) => (text(node(o)['id']) === undefined ? [] : [[text(node(o)['id'])!, node(o)] as const])));
  const seen = new Set<string>();
  list(doc['agents']).forEach((raw, i) => {
    const agent = node(raw);
    const at = `agents[${i}]`;
    const id = text(agent['id']);
    if (id !== undefined) {
      if (seen.has(id)) problems.push({ path: `${at}.id`, message: `duplicate agent id "${id}"`, fix: 'give each agent its own id (a UUID)' });
      seen.add(id);
    }
    const orgId = text(agent['organization']);
    const org = orgId === undefined ? undefined : orgs.get(orgId);
    if (orgId !== undefined && !org) {
      problems.push({ path: `${at}.organization`, message: `no organization "${orgId}"`, fix: oneOf(orgId, [...orgs.keys()], 'an organization id') });
    }
    if (org) {
      const users = list(org['users']).flatMap((u) => text(node(u)['id']) ?? []);
      const groups = list(org['groups']).flatMap((g) => text(node(g)['id']) ?? []);
      const createdBy = text(agent['createdBy']);
      if (createdBy !== undefined && !users.includes(createdBy)) {
        problems.push({
          path: `${at}.createdBy`,
          message: `no user "${createdBy}" in organization "${orgId}"`,
          fix: oneOf(createdBy, users, 'a user of that organization'),
        });
      }
      list(agent['sharedWith']).forEach((share, j) => {
        const user = text(node(share)['user']);
        const group = text(node(share)['group']);
        if (user !== undefined && !users.includes(user)) {
          problems.push({
            path: `${at}.sharedWith[${j}].user`,
            message: `no user "${user}" in organization "${orgId}"`,
            fix: oneOf(user, users, 'a user of that organization'),
          });
        }
        if (group !== undefined && !groups.includes(group)) {
          problems.push({
            path: `${at}.sharedWith[${j}].group`,
            message: `no group "${group}" in organization "${orgId}"`,
            fix: oneOf(group, groups, 'a group of that organization'),
          });
        }
      });
    }
    const labels = new Set<string>();
    list(agent['inputs']).forEach((input, j) => {
      const label = text(node(input)['label']);
      if (label === undefined) return;
      if (labels.has(label)) problems.push({ path: `${at}.inputs[${j}].label`, message: `duplicate label "${label}"`, fix: 'give each input its own label' });
      labels.add(label);
    });
  });
  return problems;
};

const cronSchedules: ConfigCheck = ({ doc }) =>
  list(doc['agents']).flatMap((agent, i) =>
    list(node(agent)['triggers']).flatMap((raw, j) => {
      const trigger = node(raw);
      const cron = text(trigger['cron']);
      if (trigger['type'] !== 'schedule' || cron === undefined) return [];
      const timezone = text(trigger['timezone']);
      try {
        cronExpressions().parse(cron, timezone ? { tz: timezone } : {});
        if (cron.trim().split(/\s+/).length < 5) throw new Error('expected 5 or 6 fields');
        return [];
      } catch (err) {
        return [
          {
            path: `agents[${i}].triggers[${j}].cron`,
            message: `invalid cron expression "${cron}" (${(err as Error).message})`,
            fix: 'write five fields: minute hour day-of-month month day-of-week, e.g. "0 7 * * 1-5"',
          },
        ];
      }
    }),
  );

const organizationMembers: ConfigCheck = ({ doc }) => {
  const problems: ConfigProblem[] = [];
  const seenUsers = new Map<string, string>();
  list(doc['organizations']).forEach((raw, i) => {
    const org = node(raw);
    const orgId = text(org['id']) ?? `#${i}`;
    const users = list(org['users']).flatMap((u) => text(node(u)['id']) ?? []);
    list(org['users']).forEach((user, j) => {
      const id = text(node(user)['id']);
      if (id === undefined) return;
      const other = seenUsers.get(id);
      if (other !== undefined) {
        problems.push({
          path: `organizations[${i}].users[${j}].id`,
          message: `user "${id}" also in organization "${other}"`,
          fix: 'a user belongs to one organization: rename one of them',
        });
      }
      seenUsers.set(id, orgId);
    });
    list(org['groups']).forEach((group, j) => {
      list(node(group)['members']).forEach((member, k) => {
        if (typeof member !== 'string' || users.includes(member)) return;
        problems.push({
          path: `organizations[${i}].groups[${j}].members[${k}]`,
          message: `no user "${member}" in organization "${orgId}"`,
          fix: oneOf(member, users, 'a user of that organization'),
        });
      });
    });
  });
  return problems;
};

const dlpCustomPatterns: ConfigCheck = ({ doc }) =>
  list(doc['organizations']).flatMap((org, i) =>
    list(node(node(org)['dlp'])['custom']).flatMap((custom, j) => {
      const pattern = text(node(custom)['pattern']);
      const problem = pattern === undefined ? null : dlpPatternProblem(pattern);
      if (problem === null) return [];
      return [{ path: `organizations[${i}].dlp.custom[${j}].pattern`, message: problem, fix: 'write an RE2 pattern (no lookaround, no backreferences)' }];
    }),
  );

/** responses.compaction: its model is a configured one; its target is below its threshold (else every turn compacts). */
function compactionSettings(input: CheckInput): ConfigProblem[] {
  const compaction = node(node(input.doc['responses'])['compaction']);
  const problems: ConfigProblem[] = [];
  const model = text(compaction['model']);
  if (model !== undefined) problems.push(...modelReference(input, 'responses.compaction.model', model));
  const threshold = compaction['threshold'];
  const target = compaction['target'];
  if (typeof threshold === 'number' && typeof target === 'number' && target >= threshold) {
    problems.push({
      path: 'responses.compaction.target',
      message: `target ${target} is not below threshold ${threshold}: a compacted conversation would be compacted again at once`,
      fix: 'a target below the threshold, such as 0.5 with the default threshold 0.8',
    });
  }
  return problems;
}

/**
 * The names of UTC (IANA's, as Intl knows them; any case): the default zone is accepted without asking
 * Intl, whose first time-zone formatter maps ~4.5 MB of ICU data and code into the process for its life
 * (gateway RSS at idle 84 -> 78 MB when skipped).
 */
const UTC_NAMES = new Set(['utc', 'etc/utc', 'etc/uct', 'uct', 'gmt', 'etc/gmt', 'etc/universal', 'universal', 'etc/zulu', 'zulu']);

/** responses.timezone must be a time zone this runtime knows (an IANA name such as Europe/Berlin). */
function responsesTimezone({ doc }: CheckInput): ConfigProblem[] {
  const zone = text(node(doc['responses'])['timezone']);
  if (zone === undefined || UTC_NAMES.has(zone.toLowerCase())) return [];
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone });
    return [];
  } catch {
    return [{ path: 'responses.timezone', message: `unknown time zone "${zone}"`, fix: 'an IANA time zone name such as UTC or Europe/Berlin' }];
  }
}

/** files.shareTtlSeconds, the default lifetime of a share link, must be one a call could ask for. */
function fileShareLifetimes({ doc }: CheckInput): ConfigProblem[] {
  const files = node(doc['files']);
  const ttl = files['shareTtlSeconds'];
  const max = files['maxShareTtlSeconds'];
  if (typeof ttl !== 'number' || typeof max !== 'number' || ttl <= max) return [];
  return [
    {
      path: 'files.shareTtlSeconds',
      message: `the default share link lifetime ${ttl} is longer than files.maxShareTtlSeconds ${max}`,
      fix: `at most ${max}, or raise files.maxShareTtlSeconds`,
    },
  ];
}

/**
 * Console sign-in maps an ID token to exactly one user: an oidcSubject, or an email (compared without
 * case, as mail providers treat it), names at most one user of the whole configuration.
 */
const consoleSignInIdentities: ConfigCheck = ({ doc }) => {
  const problems: ConfigProblem[] = [];
  const seen = { oidcSubject: new Map<string, string>(), email: new Map<string, string>() };
  list(doc['organizations']).forEach((org, i) => {
    list(node(org)['users']).forEach((user, j) => {
      for (const field of ['oidcSubject', 'email'] as const) {
        const value = text(node(user)[field]);
        if (value === undefined) continue;
        const at = `organizations[${i}].users[${j}].${field}`;
        const key = field === 'email' ? value.toLowerCase() : value;
        const first = seen[field].get(key);
        if (first !== undefined)
          problems.push({ path: at, message: `${field} "${value}" is also given at ${first}`, fix: `give each user their own ${field}` });
        else seen[field].set(key, at);
      }
    });
  });
  return problems;
};

/** Every cross-reference check, run in this order; each reports all it finds. */
export const CONFIG_CHECKS: readonly ConfigCheck[] = [
  responsesTimezone,
  compactionSettings,
  modelProviders,
  uniqueModelIds,
  modelReferences,
  agentReferences,
  cronSchedules,
  organizationMembers,
  dlpCustomPatterns,
  egressProfileUrls,
  webSearchSettings,
  fileShareLifetimes,
  consoleSignInIdentities,
];
