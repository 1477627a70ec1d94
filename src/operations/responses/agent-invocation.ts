// POST /v1/responses with `model: agent/<agent_id>` (spec "POST /v1/responses" rule 7): the request
// starts a run of the agent instead of a model call. The agent supplies the model, the system prompt and
// the tools; the caller's `instructions` are appended after the agent's own prompt; the caller's text
// is the run's input:
//   - `input` as a string is the text; as an array, the text of its user messages (string content or
//     `input_text` parts), joined by a blank line. Anything else (images, files, other roles, function
//     call items) is a 400 naming it: only text reaches an agent run.
//   - The text goes to the agent's first declared input (in the agent's configuration order), which its
//     step prompts name as {{Label}}; an agent that declares no input gets it as the run's first user
//     message, after the system prompt and before the first step. Other required inputs cannot be given
//     this way: such an agent answers 422 missing_inputs naming them.
// The response returns at once, status in_progress, id `resp_run_<run_id>`; it is polled with GET
// /v1/responses/{id} or streamed (`stream: true` here, or GET …?stream=true, full replay only), and the
// run is also readable at /v1/runs/{runId}. Forbidden fields are a 400 unsupported_parameter naming the
// field; an agent the caller cannot see is the 404 of an unknown model.
import { callerOf, isUuid } from '../../agents/access';
import { mintId } from '../../formats/responses';
import { GatewayError } from '../../http/errors';
import type { RequestContext } from '../../pipeline/context';
import { parseStartingAfter, responseExpiry } from '../../responses';
import { acceptInputs } from '../../runs/inputs';
import { newRunId } from '../../runs/ids';
import { createRunResponse, runIdOfResponse, runResponseId, type ResponsesInvocation } from '../../runs/run-response';
import type { AppServices } from '../../services';
import type { AgentRecord, Principal, RunInput } from '../../store/types';
import type { Reply } from '../types';
import { streamStoredEvents } from './replay-sse';

type Body = Record<string, unknown>;

export const AGENT_MODEL_PREFIX = 'agent/';

export const isAgentModel = (model: unknown): model is string => typeof model === 'string' && model.startsWith(AGENT_MODEL_PREFIX);

/** Sampling parameters: the agent's model settings are its own (rule 7, "sampling parameters such as temperature"). */
export const SAMPLING_FIELDS = [
  'temperature',
  'top_p',
  'top_k',
  'top_logprobs',
  'presence_penalty',
  'frequency_penalty',
  'seed',
  'n',
  'stop',
  'logit_bias',
] as const;

const present = (value: unknown): boolean => value !== undefined && value !== null;

function forbidden(field: string, why: string): GatewayError {
  return new GatewayError('unsupported_parameter', `'${field}' is not supported when invoking an agent (model agent/<agent_id>): ${why}.`, { param: field });
}

/**
 * Rule 7's forbidden fields, first found first: `tools` (an empty array supplies none and is accepted),
 * `tool_choice` other than `auto`, `conversation`, `previous_response_id`, `background: true`, and the
 * sampling parameters.
 */
export function checkAgentInvocation(body: Body): void {
  const tools = body['tools'];
  if (present(tools) && !(Array.isArray(tools) && tools.length === 0)) throw forbidden('tools', 'the agent supplies its own tools');
  const choice = body['tool_choice'];
  if (present(choice) && choice !== 'auto') throw forbidden('tool_choice', "the agent decides which of its tools to call; only 'auto' is accepted");
  for (const field of ['conversation', 'previous_response_id'] as const) {
    if (present(body[field])) throw forbidden(field, 'every invocation starts a new run with its own conversation');
  }
  if (body['background'] === true) throw forbidden('background', 'an agent invocation always returns at once, in progress, to be polled or streamed');
  for (const field of SAMPLING_FIELDS) {
    if (present(body[field])) throw forbidden(field, "the agent's model settings are its own");
  }
}

function notText(param: string, what: string): GatewayError {
  return new GatewayError('bad_request', `${param}: ${what} An agent run takes text only (a string, or user messages with input_text parts).`, { param });
}

/** The caller's text: `input` as a string, or its user messages' text joined by a blank line. */
export function invocationText(input: unknown): string {
  if (typeof input === 'string') return input;
  if (!Array.isArray(input)) throw notText('input', 'must be a string or an array of input items.');
  const texts: string[] = [];
  input.forEach((entry: unknown, i) => {
    const item = entry !== null && typeof entry === 'object' && !Array.isArray(entry) ? (entry as Body) : null;
    if (!item) throw notText(`input[${i}]`, 'must be an input item.');
    const type = item['type'] ?? 'message';
    if (type !== 'message') throw notText(`input[${i}].type`, `'${String(type)}' items cannot be sent to an agent.`);
    if (item['role'] !== 'user') {
      throw notText(`input[${i}].role`, `'${String(item['role'])}' messages cannot be sent to an agent (send instructions in 'instructions').`);
    }
    const content = item['content'];
    if (typeof content === 'string') {
      texts.push(content);
      return;
    }
    if (!Array.isArray(content)) throw notText(`input[${i}].content`, 'must be a string or an array of parts.');
    const parts = content.map((part: unknown, j) => {
      const holder = part !== null && typeof part === 'object' ? (part as Body) : {};
      if (holder['type'] !== 'input_text' || typeof holder['text'] !== 'string') {
        throw notText(`input[${i}].content[${j}]`, `'${String(holder['type'])}' parts cannot be sent to an agent.`);
      }
      return holder['text'];
    });
    texts.push(parts.join(''));
  });
  return texts.join('\n\n');
}

/** Where the text goes: the agent's first declared input, else the run's first user message. */
export function deliverText(agent: Pick<AgentRecord, 'inputs'>, text: string): { inputs: RunInput[]; message?: string } {
  const first = agent.inputs[0];
  return first ? { inputs: [{ name: first.label, value: text }] } : { inputs: [], message: text };
}

/** The organization's DLP redaction of request text (identity when no policy applies). */
function redactorFor(services: AppServices, orgId: string): (text: string) => string {
  const hooks = services.pipeline.plugins.find((p) => p.hooks.redactorFor)?.hooks;
  const redactor = hooks?.redactorFor?.(orgId) ?? null;
  return redactor ? (text) => redactor.redact(text).text : (text) => text;
}

async function visibleAgentModel(services: AppServices, principal: Principal, model: string): Promise<AgentRecord> {
  const agentId = model.slice(AGENT_MODEL_PREFIX.length);
  const agent = isUuid(agentId) ? await services.store.agents.getVisible(principal, agentId) : null;
  // Missing and not visible are the same answer, the one an unknown model gets (nested envelope).
  if (!agent) throw new GatewayError('model_not_found', `The model '${model}' does not exist or you do not have access to it.`, { param: 'model' });
  return agent;
}

export async function invokeAgent(ctx: RequestContext, services: AppServices, body: Body): Promise<Reply | undefined> {
  checkAgentInvocation(body);
  const model = body['model'] as string;
  const principal = callerOf(ctx);
  const agent = await visibleAgentModel(services, principal, model);
  ctx.resourceIds['agentId'] = agent.id;
  const redact = redactorFor(services, agent.orgId);
  const text = redact(invocationText(body['input']));
  const { inputs, message } = deliverText(agent, text);
  acceptInputs(agent.inputs, inputs); // 422 before anything exists: the agent needs inputs this request cannot give
  const instructions = typeof body['instructions'] === 'string' && body['instructions'].trim() !== '' ? redact(body['instructions']) : undefined;
  const invocation: ResponsesInvocation = { ...(instructions !== undefined ? { instructions } : {}), ...(message !== undefined ? { message } : {}) };

  const runId = newRunId();
  const id = runResponseId(runId);
  const createdAt = services.clock.now().toISOString();
  const { input: _input, ...echoed } = body;
  const streams = services.responseStreams;
  const snapshot = await createRunResponse(
    { responses: services.store.responses, live: streams.live, logger: services.logger },
    {
      runId,
      orgId: agent.orgId,
      userId: principal.userId,
      model,
      // What the response object echoes: the caller's fields as sent (redacted instructions), stored.
      request: { ...echoed, ...(instructions !== undefined ? { instructions } : {}), store: true },
      inputItems: [{ id: mintId('msg'), type: 'message', role: 'user', content: [{ type: 'input_text', text }], status: 'completed' }],
      createdAt,
      expiresAt: responseExpiry(createdAt, services.config.store.retentionDays),
    },
  );
  ctx.resourceIds['response_id'] = id;
  try {
    await services.runs.trigger({ principal, agent, inputs, trigger: 'responses', runId, invocation });
  } catch (err) {
    // No run: the response must not stay in progress for ever.
    const error = { code: 'run_not_started', message: 'The agent run could not be started.' };
    await services.store.responses
      .finish(id, { status: 'failed', body: { ...snapshot, status: 'failed', error } }, { whenStatus: 'in_progress' })
      .catch(() => null);
    throw err;
  }
  ctx.resourceIds['runId'] = runId;
  if (body['stream'] !== true) return { status: 200, body: snapshot };
  await streamStoredEvents(ctx, services, id, -1);
  return undefined;
}

/** A `resp_run_` response is visible only while its run is (same agent permissions as /v1/runs/{runId}). */
export async function runResponseVisible(services: AppServices, principal: Principal, responseId: string): Promise<boolean> {
  const runId = runIdOfResponse(responseId);
  if (runId === null) return true;
  return isUuid(runId) && (await services.store.runs.getVisible(principal, runId)) !== null;
}

/**
 * The replay start of a `resp_run_` response: only a full replay (spec: `starting_after` 0 or absent;
 * a positive value, or a positive Last-Event-ID, is a 400 naming it). Malformed values are the 400 of
 * any response.
 */
export function runReplayStart(query: unknown, lastEventId: string | undefined): number {
  const from = parseStartingAfter(query, lastEventId);
  if (from > 0) {
    const param = query !== undefined ? 'starting_after' : 'Last-Event-ID';
    throw new GatewayError('invalid_starting_after', `Responses of agent runs (resp_run_…) are replayed whole only: '${param}' must be 0 or absent.`, {
      param,
    });
  }
  return -1;
}
