// POST /v1/responses (spec "POST /v1/responses", "Events"). Thin: the route's own rules, the opt-in
// curated prompt, then the model-call path: a native Responses upstream gets the inspected bytes (our
// own fields removed) and its reply is relayed; any other provider is called through the canonical
// model and the reply built by the Responses format. Every failure before the first byte is JSON in
// the nested envelope.
//
// A stateful request (rule 2: `store: true`, `conversation` or `previous_response_id`) is one turn of
// a stored conversation (src/conversations/turn.ts): the conversation's history is loaded and sent
// before the new turn, the response and its event log are stored (stored-response.ts), and the turn's
// input and output items are appended to the conversation when it completes.
import { callerOf } from '../../agents/access';
import type { JsonObject } from '../../canonical/model';
import { historyInput, referencedItemIds, statefulInput } from '../../conversations/history';
import { beginTurn, type ConversationTurn } from '../../conversations/turn';
import { mintId, redactResponsesRequest, responsesRequestToCanonical } from '../../formats/responses';
import { isHostedToolType } from '../../formats/responses/request-tools';
import { requestBaseUrl } from '../../files/share-link';
import type { McpApproval, ToolLoopScope } from '../../tools/loop';
import { GatewayError } from '../../http/errors';
import { droppedParamsHeader, forwardWireCall, prepareWireCall, requestScope, type WireCodec } from '../../model-call/wire-call';
import type { RequestContext } from '../../pipeline/context';
import { responseExpiry } from '../../responses';
import type { AppServices } from '../../services';
import type { Principal, ResponseRecord } from '../../store/types';
import type { Handler, Reply } from '../types';
import { invokeAgent, isAgentModel } from './agent-invocation';
import { currentDateMessage, DEFAULT_CURATED_PROMPT, serviceContextText, wantsCuratedPrompt, withCuratedPrompt } from './curated-prompt';
import { originatingInputItems } from './input-items';
import { relayNativeJson, relayNativeStream } from './native-relay';
import { checkResponseRequest, isStateful } from './request-rules';
import { storedResponse } from './stored-response';
import { serverCallsOf, withServerCallOutputs } from './server-call-outputs';
import { resolveForKey } from '../../providers/key-models';
import { translatedResponse } from './translated';
import { GEN_AI_CONVERSATION_ID } from '../../telemetry/gen-ai';
import { activeSpan } from '../../telemetry/tracing';

/** Rule 1: removed from the outgoing request (metadata is stored and echoed instead); `svc` is ours. */
const OWN_FIELDS = ['metadata', 'litellm_metadata', 'proxy_server_request', 'svc'] as const;

export const RESPONSES_CODEC: WireCodec = {
  format: 'responses',
  toCanonical: responsesRequestToCanonical,
  redact: redactResponsesRequest,
  ownFields: OWN_FIELDS,
};

type Json = Record<string, unknown>;

const isRecord = (value: unknown): value is Json => value !== null && typeof value === 'object' && !Array.isArray(value);

export const createResponse: Handler = async (ctx, services) => {
  // The generated validator (OpenAPI CreateResponseRequest) has checked the shapes, naming the field.
  const sent = ctx.body as Json;
  // Rule 7: an agent invoked as a model starts a run instead of a model call.
  if (isAgentModel(sent['model'])) return invokeAgent(ctx, services, sent);
  // Calls the gateway ran, sent back without their results, get them again (server-call-outputs.ts).
  const original = withServerCallOutputs(sent, orgOf(ctx), services.outputItems);
  checkResponseRequest(original);
  if (isStateful(original)) return statefulResponse(ctx, services, original);
  const body = withCachedReferences(ctx, services, withCuratedPrompt(original, curatedPrompt(services)));
  return respond(ctx, services, body, { metadata: metadataOf(body) }, null);
};

/**
 * A stateless request to a provider the gateway translates for: each `item_reference` to an output
 * item of a recent stateless response of the organization is replaced by that item
 * (src/responses/output-item-cache.ts); any other is left for the format to refuse. A native upstream
 * gets its references as sent (they name its own items). Costs nothing without references.
 */
function withCachedReferences(ctx: RequestContext, services: AppServices, body: Json): Json {
  const references = referencedItemIds(body['input']);
  if (references.length === 0) return body;
  const orgId = orgOf(ctx);
  const { provider } = resolveForKey(services.modelCalls.models, orgId, ctx.principal?.models, String(body['model']));
  if (provider.forward && provider.forwards?.includes('responses')) return body;
  const input = [...(body['input'] as unknown[])];
  let changed = false;
  for (const { id, index } of references) {
    const item = services.outputItems.resolve(orgId, id);
    if (item) {
      input[index] = item;
      changed = true;
    }
  }
  return changed ? { ...body, input } : body;
}

const orgOf = (ctx: RequestContext): string => ctx.principal?.orgId ?? 'default';
const curatedPrompt = (services: AppServices): string => services.config.responses.systemPrompt ?? DEFAULT_CURATED_PROMPT;
const metadataOf = (body: Json): Json => (isRecord(body['metadata']) ? body['metadata'] : {});

/** A stored turn: where it goes besides the caller, and what its response object echoes. */
interface StatefulTarget {
  id: string;
  turn: ConversationTurn;
  /** How many leading input items are the history and service context (not the caller's new turn). */
  leading: number;
  /** Teaches the model's token estimate the input tokens the upstream reported for this turn. */
  calibrate(reportedInputTokens: number): void;
  /** Answers in this turn's input to MCP approval requests of earlier turns. */
  approvals: McpApproval[];
}

/**
 * The caller's `mcp_approval_response` items, each matched to the `mcp_approval_request` of the
 * conversation it answers (in the loaded history, else looked up); an answer to no request is a 400.
 */
async function approvalsOf(services: AppServices, turn: ConversationTurn, input: unknown): Promise<McpApproval[]> {
  if (!Array.isArray(input)) return [];
  const approvals: McpApproval[] = [];
  for (const [index, entry] of input.entries()) {
    if (!isRecord(entry) || entry['type'] !== 'mcp_approval_response') continue;
    const requestId = entry['approval_request_id'];
    if (typeof requestId !== 'string') {
      throw new GatewayError('bad_request', 'An mcp_approval_response needs the approval_request_id it answers.', {
        param: `input[${index}].approval_request_id`,
      });
    }
    const request =
      turn.items.find((item) => item.id === requestId && item.type === 'mcp_approval_request') ??
      (await services.store.conversations.getItem(turn.conversation.id, requestId));
    if (!request || request.type !== 'mcp_approval_request') {
      throw new GatewayError('bad_request', `No approval request '${requestId}' in conversation '${turn.conversation.id}'.`, {
        param: `input[${index}].approval_request_id`,
      });
    }
    const approval: McpApproval = {
      requestId,
      serverLabel: String(request.data['server_label']),
      name: String(request.data['name']),
      arguments: String(request.data['arguments'] ?? ''),
      approve: entry['approve'] === true,
    };
    if (typeof entry['reason'] === 'string') approval.reason = entry['reason'];
    approvals.push(approval);
  }
  return approvals;
}

async function statefulResponse(ctx: RequestContext, services: AppServices, original: Json): Promise<Reply | undefined> {
  const id = mintId('resp');
  const principal = callerOf(ctx);
  const streams = services.responseStreams;
  const turn = await beginTurn(
    { store: services.store, now: () => services.clock.now() },
    principal,
    original,
    pendingRecord(services, principal, original, id),
  );
  // A continuing turn's record exists from its claim on: leased to this process from now.
  if (turn.recordStored) streams.leases.hold(id);
  try {
    let body = withCuratedPrompt(original, curatedPrompt(services));
    const leadingContext: Json[] = [];
    if (wantsCuratedPrompt(original)) {
      // Service-managed context (Opt-in extensions): after the composed prompt, and the date with the input.
      const context = await serviceContextText(services.store, principal, services.config.responses);
      if (context !== '') body = { ...body, instructions: `${String(body['instructions'])}\n\n${context}` };
      leadingContext.push(currentDateMessage(services.clock.now(), services.config.responses.timezone));
    }
    const historyIds = new Set(turn.items.map((item) => item.id));
    const referenced = new Map<string, Json>();
    for (const { id: itemId, index } of referencedItemIds(original['input'])) {
      if (historyIds.has(itemId) || referenced.has(itemId)) continue;
      const item = await services.store.conversations.getItem(turn.conversation.id, itemId);
      if (!item) {
        throw new GatewayError('bad_request', `Item with id '${itemId}' not found in conversation '${turn.conversation.id}'.`, {
          param: `input[${index}].id`,
        });
      }
      referenced.set(itemId, { ...item.data, type: item.type, ...(item.role !== null ? { role: item.role } : {}) });
    }
    const newTurn = [...leadingContext, ...statefulInput(original['input'], referenced, historyIds)];
    // Rule 6: near the model's context window the oldest turns are summarised (at most once a turn).
    const instructions = typeof body['instructions'] === 'string' && body['instructions'] !== '' ? body['instructions'] : null;
    const context = await services.compaction.prepare(
      {
        conversation: turn.conversation,
        items: turn.items,
        input: newTurn,
        instructions,
        tools: body['tools'],
        maxOutputTokens: typeof body['max_output_tokens'] === 'number' ? body['max_output_tokens'] : null,
        responseId: id,
      },
      resolveForKey(services.modelCalls.models, principal.orgId, principal.models, String(body['model'])),
      requestScope(ctx, services, true),
    );
    // The compaction hint follows the composed instructions (also with `svc.system_prompt: off`).
    if (context.hint !== null) body = { ...body, instructions: instructions === null ? context.hint : `${instructions}\n\n${context.hint}` };
    const history = historyInput({ summary: context.summary }, context.items);
    const composed: Json = {
      ...body,
      input: [...history, ...newTurn],
      // The gateway holds the state: a native upstream is not asked to store, nor to find ours.
      store: false,
    };
    delete composed['conversation'];
    delete composed['previous_response_id'];
    const echo = { metadata: metadataOf(original), store: true, previous_response_id: turn.previousResponseId };
    const approvals = await approvalsOf(services, turn, original['input']);
    return await respond(ctx, services, composed, echo, {
      id,
      turn,
      leading: history.length + leadingContext.length,
      calibrate: context.calibrate,
      approvals,
    });
  } finally {
    // A no-op once the response began (its end releases the turn); else the turn failed before it.
    if (await turn.release()) streams.leases.release(id);
  }
}

/**
 * The record a continuing turn's response is stored with at its claim (before its model call: the
 * claim and the record are one store round trip); its input items and final object are written at
 * its end. The body is what a GET finds while the response is generated.
 */
function pendingRecord(services: AppServices, principal: Principal, original: Json, id: string): ResponseRecord {
  const now = services.clock.now();
  const createdAt = now.toISOString();
  const previous = typeof original['previous_response_id'] === 'string' ? original['previous_response_id'] : null;
  const model = String(original['model']);
  return {
    id,
    orgId: principal.orgId,
    userId: principal.userId,
    status: 'in_progress',
    model,
    conversationId: null,
    previousResponseId: previous,
    stored: true,
    body: {
      id,
      object: 'response',
      created_at: Math.floor(now.getTime() / 1000),
      status: 'in_progress',
      model,
      output: [],
      metadata: metadataOf(original),
      store: true,
      previous_response_id: previous,
    },
    inputItems: [],
    createdAt,
    updatedAt: createdAt,
    expiresAt: responseExpiry(createdAt, services.config.store.retentionDays),
    lease: services.responseStreams.leases.leaseFor(),
  };
}

/**
 * Where a response's server-side tool calls run: its conversation (a stateless response is a
 * conversation of its own: its own workspace), its caller, and the caller's DLP policy on outputs.
 */
function toolLoopScope(ctx: RequestContext, trustProxy: boolean, conversationId: string, responseId: string): Omit<ToolLoopScope, 'signal'> {
  const principal = callerOf(ctx);
  const dlp = ctx.dlp;
  // Links tools hand out (shared files) name the address this request came in on, absent server.publicUrl.
  const baseUrl = requestBaseUrl(ctx.req, trustProxy);
  return {
    ...(baseUrl !== null ? { baseUrl } : {}),
    orgId: principal.orgId,
    userId: principal.userId,
    conversationId,
    responseId,
    requestId: ctx.requestId,
    redact: dlp ? (text) => dlp.redact(text).text : null,
  };
}

/** Tokens of the context after a turn: what the model read and wrote (null when not reported). */
function contextTokens(final: Json): number | null {
  const usage = final['usage'];
  if (!isRecord(usage)) return null;
  const input = usage['input_tokens'];
  const output = usage['output_tokens'];
  return typeof input === 'number' && typeof output === 'number' ? input + output : null;
}

/** Whether the request has tools the gateway runs itself (hosted `svc_*`, MCP): then its tool loop serves it. */
function usesServerTools(body: Json): boolean {
  const tools = body['tools'];
  if (!Array.isArray(tools)) return false;
  return tools.some((tool: unknown) => {
    const type = isRecord(tool) ? tool['type'] : undefined;
    return type === 'mcp' || (typeof type === 'string' && isHostedToolType(type));
  });
}

async function respond(ctx: RequestContext, services: AppServices, body: Json, echo: Json, stateful: StatefulTarget | null): Promise<Reply | undefined> {
  const stream = body['stream'] === true;
  const loop = usesServerTools(body);
  const call = prepareWireCall(ctx, services, RESPONSES_CODEC, body, { detached: stateful !== null, canonical: loop });
  let sink = null;
  if (stateful) {
    const { turn, leading } = stateful;
    const inspectedInput = Array.isArray(call.inspected['input']) ? (call.inspected['input'] as Json[]) : [];
    // The new turn as inspected (redacted under a DLP policy): what the conversation keeps.
    const turnInput = inspectedInput.slice(leading);
    sink = storedResponse(ctx, services, {
      model: body['model'] as string,
      inputItems: originatingInputItems(turnInput),
      turn,
      async ending(final) {
        const status = final['status'];
        // A completed turn (or one cut by max_output_tokens) stays in the conversation; a failed one does not.
        if (status !== 'completed' && status !== 'incomplete') return { items: [], contextTokens: null };
        const output = Array.isArray(final['output']) ? (final['output'] as Json[]) : [];
        const usage = final['usage'];
        if (isRecord(usage) && typeof usage['input_tokens'] === 'number') stateful.calibrate(usage['input_tokens']);
        return { items: await turn.itemsFor(turnInput, output), contextTokens: contextTokens(final) };
      },
    });
  }
  const conversation = stateful ? { conversation: { id: stateful.turn.conversation.id } } : {};
  // Tracing on: the request's span names the turn (its response and conversation ids).
  const span = activeSpan();
  const spanTurn = (id: string | undefined) =>
    span?.set({ 'agw.response.id': id, [GEN_AI_CONVERSATION_ID]: stateful?.turn.conversation.id, 'agw.response.stored': stateful !== null });

  if (call.kind === 'forward') {
    // Relayed from a native upstream, a response kept nowhere carries the upstream's id: none is minted
    // here (nobody would see it); a stored one carries the gateway's (the record is ours).
    spanTurn(stateful?.id);
    const response = await forwardWireCall(ctx, call, 'responses', stream);
    const target = { echo: { ...echo, ...conversation }, stored: sink && stateful ? { sink, id: stateful.id } : null };
    return stream ? relayNativeStream(ctx, response, call.meter, target) : relayNativeJson(response, call.meter, target);
  }
  // Translated: the gateway writes the response object, under an id of its own.
  const id = stateful?.id ?? mintId('resp');
  spanTurn(id);
  // A response kept nowhere (store: false) has no later turn: its tools' workspace, browser context, MCP
  // sessions and state go when it ends, however it ends (a stored one's go with its conversation).
  const forgetAfter = loop && !stateful ? { orgId: orgOf(ctx), id } : null;
  const reply = translatedResponse(ctx, services, call, {
    // The fields echoed in the response object are what the model was sent (redacted under a DLP
    // policy, as a native upstream echoes them): a stored response keeps nothing the policy removed.
    body: { ...call.inspected, ...echo } as JsonObject,
    stream,
    headers: droppedParamsHeader(call.plan.dropped),
    sink,
    id,
    ...(loop
      ? {
          toolLoop: {
            ...toolLoopScope(ctx, services.config.server.trustProxy, stateful?.turn.conversation.id ?? id, id),
            approvals: stateful?.approvals ?? [],
          },
        }
      : {}),
    ...(stateful
      ? {
          conversationId: stateful.turn.conversation.id,
          // A stored response's items are in its conversation; its server calls are also kept for clients that send them back without results.
          onFinal: (final: JsonObject) => services.outputItems.remember(orgOf(ctx), serverCallsOf(final['output'])),
        }
      : { onFinal: (final: JsonObject) => services.outputItems.remember(orgOf(ctx), final['output']) }),
  });
  if (!forgetAfter) return reply;
  try {
    return await reply;
  } finally {
    // Never rejects: each part is settled apart and a failure logged (src/tools/index.ts).
    await services.tools.forget([forgetAfter]);
  }
}
