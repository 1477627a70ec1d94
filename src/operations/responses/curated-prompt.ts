// The opt-in curated prompt (spec "Opt-in extensions": `svc.system_prompt`): `off` (the default) adds
// nothing; `agent_default` puts the service's curated operational prompt first and the caller's
// `instructions` after it. The text is the operator's (`responses.systemPrompt`) or this built-in one.

export const DEFAULT_CURATED_PROMPT = [
  'You are a capable assistant working on behalf of a member of this organization.',
  'Work carefully and say plainly what you did and did not do; never invent results, sources or tool output.',
  'When a request is ambiguous, state the assumption you make before acting on it.',
  'Use the tools you are given when they help, and report their failures as they are.',
  'Keep answers as short as the task allows; prefer clear structure over length.',
].join('\n');

/** The body with the curated prompt composed into `instructions` when the caller asked for it. */
export function withCuratedPrompt(body: Record<string, unknown>, curated: string): Record<string, unknown> {
  const svc = body['svc'] as { system_prompt?: unknown } | undefined;
  if (svc?.system_prompt !== 'agent_default') return body;
  const instructions = body['instructions'];
  const own = typeof instructions === 'string' && instructions !== '' ? `\n\n${instructions}` : '';
  return { ...body, instructions: curated + own };
}
