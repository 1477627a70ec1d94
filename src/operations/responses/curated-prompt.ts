// The opt-in curated prompt (spec "Opt-in extensions": `svc.system_prompt`): `off` (the default) adds
// nothing; `agent_default` puts the service's curated operational prompt first and the caller's
// `instructions` after it. The text is the operator's (`responses.systemPrompt`) or this built-in one.
// On a stateful request `agent_default` also sends service-managed context: what the service knows
// of the caller (`responses.serviceContext`), after the composed prompt, and the current date and
// time zone (`responses.timezone`) with the triggering input, as a developer message just before it.
import type { ResponsesConfig } from '../../config/types';
import type { Store } from '../../store/port';
import type { Principal } from '../../store/types';

export const DEFAULT_CURATED_PROMPT = [
  'You are a capable assistant working on behalf of a member of this organization.',
  'Work carefully and say plainly what you did and did not do; never invent results, sources or tool output.',
  'When a request is ambiguous, state the assumption you make before acting on it.',
  'Use the tools you are given when they help, and report their failures as they are.',
  'Keep answers as short as the task allows; prefer clear structure over length.',
].join('\n');

type Body = Record<string, unknown>;

export function wantsCuratedPrompt(body: Body): boolean {
  const svc = body['svc'] as { system_prompt?: unknown } | undefined;
  return svc?.system_prompt === 'agent_default';
}

/** The body with the curated prompt composed into `instructions` when the caller asked for it. */
export function withCuratedPrompt(body: Body, curated: string): Body {
  if (!wantsCuratedPrompt(body)) return body;
  const instructions = body['instructions'];
  const own = typeof instructions === 'string' && instructions !== '' ? `\n\n${instructions}` : '';
  return { ...body, instructions: curated + own };
}

/** What the service knows of the caller, as configured: appended after the composed prompt. */
export async function serviceContextText(store: Store, principal: Principal, config: ResponsesConfig): Promise<string> {
  const include = new Set(config.serviceContext.include);
  const lines: string[] = [];
  if (include.has('organization')) {
    const org = await store.organizations.get(principal.orgId);
    lines.push(`Organization: ${org?.name && org.name !== principal.orgId ? `${org.name} (${principal.orgId})` : principal.orgId}`);
  }
  if (include.has('user')) {
    const user = await store.users.get(principal.userId);
    const name = user?.name && user.name !== principal.userId ? `${user.name} (${principal.userId})` : principal.userId;
    lines.push(`User: ${name}, role ${principal.role}`);
  }
  if (include.has('groups') && principal.groups.length > 0) lines.push(`Groups: ${principal.groups.join(', ')}`);
  if (config.serviceContext.text) lines.push(config.serviceContext.text);
  return lines.length > 0 ? `Service context:\n${lines.join('\n')}` : '';
}

/** The current date and time in the configured zone, sent with the triggering input. */
export function currentDateMessage(now: Date, timeZone: string): Body {
  const local = new Intl.DateTimeFormat('en-CA', {
    timeZone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    hour12: false,
    weekday: 'long',
  }).format(now);
  return { type: 'message', role: 'developer', content: `Current date and time: ${local} (time zone ${timeZone}).` };
}
