// The one server-side tool loop (spec "Hosted tools", MCP rows of the Responses table; agent runs use
// it too): model turn → the calls the gateway runs (hosted svc_* tools, MCP tools) executed, the
// independent ones at once → their outputs fed back → the next model turn, up to tools.maxRounds.
// Function tools are the caller's: their calls end the loop and go back to the caller as
// function_call items, never executed. tool_choice applies uniformly (a forced tool is forced on the
// first turn only, as OpenAI does, or the model could never answer).
//
// What the model is offered: each hosted tool as a function named by its type with its JSON schema,
// each MCP tool as a function `<server_label>__<tool>`. The loop's output is one stream of canonical
// parts (one `start`, the turns' blocks, a `server-tool-result` after each call it ran, one `finish`
// with the turns' usage summed), so a format renders it as one response (svc_call / mcp_call items).
//
// A call is bounded (time, output size); a failing call is a result with status failed whose message
// the model sees, never a failed response. Each call is metered (agw_tool_calls_total, duration) and
// written to the audit trail (tool, duration, status; never its arguments or output). Outputs pass
// through the organization's DLP policy before any model sees them.
import { randomUUID } from 'node:crypto';
import type { Logger } from 'winston';
import { ResponseAssembler } from '../canonical/assemble';
import type {
  FinishReason,
  Message,
  ModelRequest,
  ModelResponse,
  StreamPart,
  ToolCallPart,
  ToolChoice,
  ToolDefinition,
  ToolResultPart,
  Usage,
} from '../canonical/model';
import type { ToolsConfig } from '../config/types';
import { mcpFunctionName } from '../formats/responses/request-tools';
import type { ServerTool } from '../formats/responses/responses-event-stream';
import { GatewayError } from '../http/errors';
import type { Metrics } from '../log/metrics';
import type { Store } from '../store/port';
import type { ToolRegistry } from './registry';
import { ToolFailure, type HostedTool, type ToolOutcome } from './types';
import type { Workspaces } from './workspace';
import { GEN_AI_OPERATION_NAME, GEN_AI_TOOL_CALL_ID, GEN_AI_TOOL_NAME, GEN_AI_TOOL_TYPE } from '../telemetry/gen-ai';
import type { Tracing } from '../telemetry/tracing';

/** What the loop needs of the MCP client (src/tools/mcp/). */
export interface McpAccess {
  parse(config: Record<string, unknown>, param: string): McpServer;
  listTools(server: McpServer, conversationId: string, signal: AbortSignal): Promise<McpToolInfo[]>;
  callTool(
    server: McpServer,
    conversationId: string,
    name: string,
    args: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<{ output: string; isError: boolean }>;
  needsApproval(server: McpServer, toolName: string): boolean;
}
export interface McpServer {
  serverLabel: string;
}
export interface McpToolInfo {
  name: string;
  description?: string;
  inputSchema?: Record<string, unknown>;
  annotations?: Record<string, unknown>;
}

export interface ToolLoopDeps {
  registry: ToolRegistry;
  mcp: McpAccess | null;
  workspaces: Workspaces;
  config: ToolsConfig;
  store: Store;
  metrics: Metrics;
  logger: Logger;
  /** Tracing (null or absent: off): each call the gateway runs gets an `execute_tool {name}` span. */
  tracing?: Tracing | null;
}

/** Where one loop runs: whose, which conversation, and how it may be stopped. */
export interface ToolLoopScope {
  orgId: string;
  userId: string | null;
  /** The conversation (its workspace, browser, egress and MCP listings). */
  conversationId: string;
  responseId?: string;
  runId?: string;
  /** The request id the audit records carry. */
  requestId: string;
  /** The response or run stopping (not a tool's own time limit). */
  signal: AbortSignal;
  /** The organization's DLP redactor (null: no policy). */
  redact: ((text: string) => string) | null;
  /** An agent run's record of earlier executions (re-executed rounds reuse it), else none. */
  journal?: ToolJournal;
  /** The gateway's address as the caller reached it (ToolCallContext.baseUrl), when a request started the loop. */
  baseUrl?: string;
  /**
   * The caller's answers (`mcp_approval_response` input items) to MCP calls an earlier response of the
   * conversation asked to approve (its `mcp_approval_request` items): approved calls run before the
   * first model turn, denied ones are shown to the model as failed.
   */
  approvals?: McpApproval[];
  /**
   * Set where there is no caller to answer function calls (agent runs): a call of a function the
   * gateway does not run gets this message as a failed result, and the loop goes on.
   */
  unknownCalls?: string;
}

/** An answered approval request: the call as it was requested, and the caller's answer. */
export interface McpApproval {
  /** The `mcp_approval_request` item's id (`mcpr_<call id>`). */
  requestId: string;
  serverLabel: string;
  name: string;
  arguments: string;
  approve: boolean;
  reason?: string;
}

/** The MCP server and tool (its own name, not the function name the model called) a call went to. */
export interface McpCallTarget {
  serverLabel: string;
  name: string;
}

/** A call's result as the model is shown it. */
export interface ToolCallResult {
  status: 'completed' | 'failed';
  output: string;
  images?: ToolOutcome['images'];
}

/**
 * An agent run's memory of the loop across executions: a round whose model turn is recorded is not
 * asked again, and a call whose result is recorded is not run again (its idempotency keys).
 */
export interface ToolJournal {
  /** The recorded model turn of `round`, with the results recorded so far by call id. */
  recall(round: number): Promise<{ response: ModelResponse; results: Map<string, ToolCallResult> } | null>;
  /** Records the model turn of `round` (one that made calls) before any of its calls run. */
  recordTurn(round: number, response: ModelResponse): Promise<void>;
  /**
   * Records a call's result before the loop goes on; `via` names the MCP server and tool when an MCP
   * server ran it (an `mcp_call` item), absent for a hosted tool (an `svc_call` item).
   */
  recordResult(round: number, call: ToolCallPart, result: ToolCallResult, via?: McpCallTarget): Promise<void>;
}

/** A model turn: the loop's request of that round, as a stream of parts. */
export type ModelTurn = (request: ModelRequest, round: number) => AsyncIterable<StreamPart>;

type Runner = { kind: 'hosted'; tool: HostedTool } | { kind: 'mcp'; server: McpServer; name: string; approval: boolean };

/** A request prepared for the loop: the model's view of its tools, and who runs each call. */
export interface ToolPlan {
  request: ModelRequest;
  /** For the format's event stream: which function names the gateway runs (`callId`: an approved call runs). */
  serverTools(functionName: string, callId?: string): ServerTool | undefined;
  /** Approved or denied calls to settle before the first model turn. */
  approvals: Array<{ call: ToolCallPart; approval: McpApproval }>;
  /** `mcp_list_tools` items of the servers listed for this request (shown before the first turn). */
  listings: Record<string, unknown>[];
  /** The runners by function name. */
  runners: Map<string, Runner>;
}

/** Whether a request has tools the gateway runs itself. */
export function needsToolLoop(tools: readonly ToolDefinition[]): boolean {
  return tools.some((tool) => tool.kind === 'hosted' || tool.kind === 'mcp');
}

const addUsage = (a: Usage, b: Usage): Usage => {
  const sum: Usage = { inputTokens: a.inputTokens + b.inputTokens, outputTokens: a.outputTokens + b.outputTokens };
  const cached = (a.cachedInputTokens ?? 0) + (b.cachedInputTokens ?? 0);
  if (cached > 0) sum.cachedInputTokens = cached;
  const reasoning = (a.reasoningTokens ?? 0) + (b.reasoningTokens ?? 0);
  if (reasoning > 0) sum.reasoningTokens = reasoning;
  return sum;
};

/** Cuts text to `max` UTF-8 bytes (on a character boundary), saying so. */
export function boundOutput(text: string, max: number): string {
  const bytes = Buffer.byteLength(text);
  if (bytes <= max) return text;
  let cut = Buffer.from(text).subarray(0, max).toString('utf8');
  if (cut.endsWith('\uFFFD')) cut = cut.slice(0, -1);
  return `${cut}\n[output cut: ${bytes} bytes, the limit is ${max}]`;
}

export class ToolLoop {
  constructor(private readonly deps: ToolLoopDeps) {}

  /**
   * The model's view of the request's tools: svc_tools expanded, hosted tools as functions, each MCP
   * server's tools listed (allowed_tools honoured) as functions. A hosted tool the organization cannot
   * use, or an MCP server that cannot be listed, is a 400 naming it.
   */
  async prepare(request: ModelRequest, scope: ToolLoopScope): Promise<ToolPlan> {
    const expanded = this.deps.registry.expand(scope.orgId, request.tools);
    const tools: ToolDefinition[] = [];
    const runners = new Map<string, Runner>();
    const listings: Record<string, unknown>[] = [];
    const mcpNames = new Map<string, string>(); // MCP tool name or server label → function name (tool_choice)
    for (const [index, tool] of expanded.entries()) {
      if (tool.kind === 'hosted') {
        const hosted = this.deps.registry.get(scope.orgId, tool.type);
        if (!hosted) continue; // expand() refused the unusable ones
        tools.push({ kind: 'function', name: hosted.type, description: hosted.description, parameters: hosted.parameters });
        runners.set(hosted.type, { kind: 'hosted', tool: hosted });
      } else if (tool.kind === 'mcp') {
        const mcp = this.deps.mcp;
        // The caller's position of the tool (svc_tools expansion shifts the expanded list's).
        const position = request.tools.indexOf(tool);
        const param = `tools[${position >= 0 ? position : index}]`;
        if (!mcp) throw new GatewayError('unsupported_tool_type', 'MCP tools are not available on this gateway.', { param });
        const server = mcp.parse({ type: 'mcp', ...tool.config }, param);
        let listed: McpToolInfo[];
        try {
          listed = await mcp.listTools(server, scope.conversationId, scope.signal);
        } catch (err) {
          throw new GatewayError(
            'bad_request',
            `The MCP server ${server.serverLabel} could not be listed: ${err instanceof Error ? err.message : String(err)}`,
            {
              param,
            },
          );
        }
        listings.push({
          type: 'mcp_list_tools',
          id: `mcpl_${randomUUID().replaceAll('-', '')}`,
          server_label: server.serverLabel,
          tools: listed.map((t) => ({
            name: t.name,
            description: t.description ?? null,
            input_schema: t.inputSchema ?? {},
            annotations: t.annotations ?? null,
          })),
          error: null,
        });
        for (const info of listed) {
          const name = mcpFunctionName(server.serverLabel, info.name);
          const definition: ToolDefinition = { kind: 'function', name, parameters: info.inputSchema ?? { type: 'object', properties: {} } };
          if (info.description !== undefined) definition.description = info.description;
          tools.push(definition);
          runners.set(name, { kind: 'mcp', server, name: info.name, approval: mcp.needsApproval(server, info.name) });
          if (!mcpNames.has(info.name)) mcpNames.set(info.name, name);
          if (!mcpNames.has(server.serverLabel)) mcpNames.set(server.serverLabel, name);
        }
      } else {
        tools.push(tool);
      }
    }
    // Answers to earlier approval requests: each names a call of a server this request offers.
    const approvals: ToolPlan['approvals'] = [];
    const approvedIds = new Set<string>();
    for (const approval of scope.approvals ?? []) {
      const name = mcpFunctionName(approval.serverLabel, approval.name);
      if (!runners.has(name)) {
        throw new GatewayError(
          'bad_request',
          `The approved call ${approval.name} is on the MCP server ${approval.serverLabel}, which this request does not offer.`,
          {
            param: 'input',
          },
        );
      }
      const callId = approval.requestId.startsWith('mcpr_') ? approval.requestId.slice('mcpr_'.length) : approval.requestId;
      approvals.push({ call: { type: 'tool-call', id: callId, name, arguments: approval.arguments }, approval });
      approvedIds.add(callId);
    }
    const prepared: ModelRequest = { ...request, tools };
    const choice = request.toolChoice === undefined ? undefined : mapChoice(request.toolChoice, mcpNames);
    if (choice === undefined) delete prepared.toolChoice;
    else prepared.toolChoice = choice;
    return {
      request: prepared,
      runners,
      listings,
      approvals,
      serverTools(functionName, callId) {
        const runner = runners.get(functionName);
        if (!runner) return undefined;
        if (runner.kind === 'hosted') return { item: 'svc_call' };
        if (runner.kind === 'mcp' && runner.approval && (callId === undefined || !approvedIds.has(callId)))
          return { item: 'mcp_approval_request', serverLabel: runner.server.serverLabel, name: runner.name };
        return { item: 'mcp_call', serverLabel: runner.server.serverLabel, name: runner.name };
      },
    };
  }

  /**
   * Runs the loop: the parts of every model turn and a server-tool-result after each call the gateway
   * ran, as one stream ending in one `finish` (usage summed over the turns). `lastResponse` is the
   * final turn's reply once the stream ended.
   */
  async *run(plan: ToolPlan, turn: ModelTurn, scope: ToolLoopScope, out: { lastResponse?: ModelResponse } = {}): AsyncGenerator<StreamPart> {
    const maxRounds = this.deps.config.maxRounds;
    let messages: Message[] = plan.request.messages;
    let usage: Usage = { inputTokens: 0, outputTokens: 0 };
    for (const listing of plan.listings) yield { type: 'native', format: 'responses', value: listing as never };
    let started = false;
    if (plan.approvals.length > 0) {
      // The approved calls run now (denied ones fail, saying so); the model then sees them as its own calls.
      const calls = plan.approvals.map(({ call }) => call);
      for (const [i, call] of calls.entries()) {
        yield { type: 'tool-call-start', id: `approved${i}`, callId: call.id, name: call.name };
        if (call.arguments !== '') yield { type: 'tool-call-delta', id: `approved${i}`, delta: call.arguments };
        yield { type: 'tool-call-end', id: `approved${i}` };
      }
      const results = new Map<string, ToolCallResult>();
      const denied = plan.approvals.filter(({ approval }) => !approval.approve);
      for (const { call, approval } of denied) {
        results.set(call.id, { status: 'failed', output: `The user denied this call${approval.reason ? `: ${approval.reason}` : '.'}` });
      }
      const approved = plan.approvals.filter(({ approval }) => approval.approve).map(({ call }) => call);
      for await (const [call, result] of this.runCalls(plan, approved, results, scope, -1, true)) results.set(call.id, result);
      for (const call of calls) {
        const result = results.get(call.id)!;
        yield {
          type: 'server-tool-result',
          callId: call.id,
          output: result.output,
          status: result.status,
          ...(result.status === 'failed' ? { error: result.output } : {}),
        };
      }
      messages = [...messages, { role: 'assistant', content: calls }, toolMessage(calls, results)];
    }
    for (let round = 0; ; round += 1) {
      const last = round >= maxRounds;
      const request: ModelRequest = { ...plan.request, messages };
      // After the first turn a forced choice is lifted; after the last round no tool may be called.
      if (last) request.toolChoice = { kind: 'none' };
      else if (round > 0 && plan.request.toolChoice && plan.request.toolChoice.kind !== 'none') request.toolChoice = { kind: 'auto' };
      const recalled = scope.journal ? await scope.journal.recall(round) : null;
      let response: ModelResponse;
      if (recalled) {
        response = recalled.response;
      } else {
        const assembler = new ResponseAssembler();
        let finish: Extract<StreamPart, { type: 'finish' }> | null = null;
        for await (const part of turn(request, round)) {
          if (part.type === 'error') throw part.error;
          assembler.push(part);
          if (part.type === 'finish') {
            finish = part;
            continue;
          }
          if (part.type === 'start') {
            if (started) continue;
            started = true;
          }
          yield part;
        }
        if (!finish) {
          // The turn's source ended without finishing: the consumer reports it as a cut stream.
          return;
        }
        response = assembler.response;
        // A turn with calls is recorded before they run (the answer turn is the caller's to keep).
        if (scope.journal && response.content.some((part) => part.type === 'tool-call')) await scope.journal.recordTurn(round, response);
      }
      if (!started) {
        started = true;
        yield { type: 'start', id: response.id, model: response.model, created: response.created };
      }
      usage = addUsage(usage, response.usage);
      out.lastResponse = response;
      const calls = response.content.filter((part): part is ToolCallPart => part.type === 'tool-call');
      const serverCalls = calls.filter((call) => plan.runners.has(call.name));
      const unknown = calls.filter((call) => !plan.runners.has(call.name));
      const runnable = [...serverCalls.filter((call) => !needsApproval(plan, call)), ...(scope.unknownCalls !== undefined ? unknown : [])];
      const clientCalls = scope.unknownCalls !== undefined ? [] : unknown;
      if (recalled) yield* replayTurn(response);
      if (runnable.length === 0 || last) {
        yield finishPart(response.finishReason, usage);
        return;
      }
      const results = new Map<string, ToolCallResult>(recalled?.results ?? []);
      for await (const [call, result] of this.runCalls(plan, runnable, results, scope, round)) {
        results.set(call.id, result);
        yield result.status === 'completed'
          ? { type: 'server-tool-result', callId: call.id, output: result.output, status: 'completed' }
          : { type: 'server-tool-result', callId: call.id, output: result.output, status: 'failed', error: result.output };
      }
      // The caller's own calls (or approvals it must give) end the loop: the caller answers them.
      if (clientCalls.length > 0 || runnable.length < serverCalls.length + (scope.unknownCalls !== undefined ? unknown.length : 0)) {
        yield finishPart('tool_calls', usage);
        return;
      }
      messages = [...messages, { role: 'assistant', content: response.content }, toolMessage(runnable, results)];
    }
  }

  /** Runs the round's calls, at most tools.maxConcurrentCalls at once, yielding each result as it comes. */
  private async *runCalls(
    plan: ToolPlan,
    calls: ToolCallPart[],
    known: Map<string, ToolCallResult>,
    scope: ToolLoopScope,
    round: number,
    approved = false,
  ): AsyncGenerator<[ToolCallPart, ToolCallResult]> {
    const queue = calls.filter((call) => !known.has(call.id));
    for (const call of calls) {
      const result = known.get(call.id);
      if (result) yield [call, result];
    }
    const running = new Map<string, Promise<[ToolCallPart, ToolCallResult]>>();
    const start = (call: ToolCallPart): void => {
      running.set(
        call.id,
        this.runCall(plan, call, scope, approved).then(async (result) => {
          if (scope.journal && round >= 0) await scope.journal.recordResult(round, call, result, mcpTarget(plan, call));
          return [call, result] as [ToolCallPart, ToolCallResult];
        }),
      );
    };
    while (queue.length > 0 && running.size < this.deps.config.maxConcurrentCalls) start(queue.shift()!);
    while (running.size > 0) {
      const [call, result] = await Promise.race(running.values());
      running.delete(call.id);
      if (queue.length > 0) start(queue.shift()!);
      yield [call, result];
    }
  }

  /** One call, bounded, metered and audited; a failure is a result the model sees (never a throw), unless the response or run stopped. */
  private async runCall(plan: ToolPlan, call: ToolCallPart, scope: ToolLoopScope, approved = false): Promise<ToolCallResult> {
    const found = plan.runners.get(call.name);
    // An approved call runs even though its tool needs approval (the caller gave it).
    const runner = found?.kind === 'mcp' && approved ? { ...found, approval: false } : found;
    if (!runner) return { status: 'failed', output: scope.unknownCalls ?? `${call.name} is not a tool the gateway runs.` };
    const tool = runner.kind === 'hosted' ? runner.tool.type : `mcp:${runner.server.serverLabel}`;
    const limits = {
      // An MCP call has its own bound (tools.mcp.callTimeoutMs): remote tools are often slower than local ones.
      timeoutMs: (runner.kind === 'hosted' ? runner.tool.limits?.timeoutMs : this.deps.config.mcp.callTimeoutMs) ?? this.deps.config.timeoutMs,
      maxOutputBytes: (runner.kind === 'hosted' ? runner.tool.limits?.maxOutputBytes : undefined) ?? this.deps.config.maxOutputBytes,
    };
    const started = process.hrtime.bigint();
    // Tracing on: the call's span (its name, id and outcome; never its arguments or output).
    const span =
      this.deps.tracing?.start(`execute_tool ${call.name}`, 'internal', {
        [GEN_AI_OPERATION_NAME]: 'execute_tool',
        [GEN_AI_TOOL_NAME]: call.name,
        [GEN_AI_TOOL_CALL_ID]: call.id,
        [GEN_AI_TOOL_TYPE]: 'extension',
        'agw.tool': tool,
      }) ?? null;
    let result: ToolCallResult;
    try {
      const execute = () => this.execute(runner, call, scope, limits.timeoutMs);
      const outcome = await (span ? span.run(execute) : execute());
      result = { status: 'completed', output: boundOutput(outcome.output, limits.maxOutputBytes) };
      if (outcome.images && outcome.images.length > 0) result.images = outcome.images;
    } catch (err) {
      if (scope.signal.aborted) {
        span?.fail('aborted');
        span?.end();
        throw scope.signal.reason ?? err;
      }
      span?.fail(err instanceof ToolFailure ? 'tool_error' : err instanceof GatewayError ? err.code : '_OTHER');
      result = { status: 'failed', output: boundOutput(failureMessage(err, call.name), limits.maxOutputBytes) };
    }
    span?.end();
    // What any model sees of a tool passes the organization's policy, like any other text.
    if (scope.redact) result.output = scope.redact(result.output);
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    this.record(tool, result.status, seconds, scope);
    return result;
  }

  private async execute(runner: Runner, call: ToolCallPart, scope: ToolLoopScope, timeoutMs: number): Promise<ToolOutcome> {
    let args: Record<string, unknown>;
    try {
      const parsed: unknown = call.arguments.trim() === '' ? {} : JSON.parse(call.arguments);
      if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not an object');
      args = parsed as Record<string, unknown>;
    } catch {
      throw new ToolFailure('The arguments are not a JSON object.');
    }
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = AbortSignal.any([scope.signal, timeout]);
    // A tool that ignores its signal still returns to the model on time.
    const expired = new Promise<never>((_, reject) => {
      const onAbort = (): void => reject(timeout.aborted ? new ToolFailure(`The call took longer than ${timeoutMs} ms and was stopped.`) : signal.reason);
      signal.addEventListener('abort', onAbort, { once: true });
    });
    const work = (async (): Promise<ToolOutcome> => {
      if (runner.kind === 'hosted') {
        const workspace = this.deps.workspaces.of(scope.orgId, scope.conversationId);
        const ctx = { orgId: scope.orgId, userId: scope.userId, conversationId: scope.conversationId, signal, workspace };
        return runner.tool.execute(args, {
          ...ctx,
          ...(scope.responseId !== undefined ? { responseId: scope.responseId } : {}),
          ...(scope.runId !== undefined ? { runId: scope.runId } : {}),
          ...(scope.baseUrl !== undefined ? { baseUrl: scope.baseUrl } : {}),
        });
      }
      if (!this.deps.mcp) throw new ToolFailure('MCP tools are not available on this gateway.');
      const reply = await this.deps.mcp.callTool(runner.server, scope.conversationId, runner.name, args, signal);
      if (reply.isError) throw new ToolFailure(reply.output || 'The MCP tool reported an error.');
      return { output: reply.output };
    })();
    work.catch(() => undefined);
    return Promise.race([work, expired]);
  }

  private record(tool: string, status: 'completed' | 'failed', seconds: number, scope: ToolLoopScope): void {
    this.deps.metrics.toolCalls.labels(tool, status).inc();
    this.deps.metrics.toolDuration.labels(tool).observe(seconds);
    const resourceIds: Record<string, string> = { tool, conversationId: scope.conversationId };
    if (scope.responseId !== undefined) resourceIds['responseId'] = scope.responseId;
    if (scope.runId !== undefined) resourceIds['runId'] = scope.runId;
    this.deps.store.audit
      .insertMany([
        {
          id: randomUUID(),
          at: new Date().toISOString(),
          orgId: scope.orgId,
          userId: scope.userId,
          keyId: null,
          method: 'TOOL',
          route: `tool:${tool}`,
          operationId: 'toolCall',
          resourceIds,
          status: status === 'completed' ? 200 : 500,
          latencyMs: Math.round(seconds * 1000),
          requestId: scope.requestId,
        },
      ])
      .catch((err: unknown) => {
        // The audit trail fails open, like the request audit: the call stands.
        this.deps.logger.warn('tool call audit record not written', { tool, errorName: err instanceof Error ? err.name : 'unknown' });
      });
  }
}

function mcpTarget(plan: ToolPlan, call: ToolCallPart): McpCallTarget | undefined {
  const runner = plan.runners.get(call.name);
  return runner?.kind === 'mcp' ? { serverLabel: runner.server.serverLabel, name: runner.name } : undefined;
}

function needsApproval(plan: ToolPlan, call: ToolCallPart): boolean {
  const runner = plan.runners.get(call.name);
  return runner?.kind === 'mcp' && runner.approval;
}

function failureMessage(err: unknown, name: string): string {
  if (err instanceof ToolFailure) return err.message;
  if (err instanceof GatewayError) return err.message;
  // An unexpected error: its kind, not its internals (paths, stack) goes to the model.
  return `The tool ${name} failed (${err instanceof Error ? err.name : 'error'}).`;
}

function finishPart(finishReason: FinishReason, usage: Usage): StreamPart {
  return { type: 'finish', finishReason, usage };
}

/** The results of a round's calls as the tool turn the model reads next. */
function toolMessage(calls: ToolCallPart[], results: Map<string, ToolCallResult>): Message {
  return {
    role: 'tool',
    content: calls.map((call): ToolResultPart => {
      const result = results.get(call.id)!;
      const images = result.images ?? [];
      if (images.length === 0) return { type: 'tool-result', callId: call.id, output: result.output, ...(result.status === 'failed' ? { isError: true } : {}) };
      const parts: ToolResultPart['output'] = [{ type: 'text', text: result.output }];
      for (const image of images) parts.push({ type: 'image', source: { kind: 'base64', mediaType: image.mediaType, data: image.data } });
      return { type: 'tool-result', callId: call.id, output: parts };
    }),
  };
}

/** A recalled turn's blocks as parts (a re-executed run step shows what the model said then). */
function* replayTurn(response: ModelResponse): Generator<StreamPart> {
  let n = 0;
  for (const block of response.content) {
    const id = `r${n++}`;
    if (block.type === 'text') {
      yield block.refusal === true ? { type: 'text-start', id, refusal: true } : { type: 'text-start', id };
      yield { type: 'text-delta', id, delta: block.text };
      yield { type: 'text-end', id };
    } else if (block.type === 'tool-call') {
      yield { type: 'tool-call-start', id, callId: block.id, name: block.name };
      if (block.arguments !== '') yield { type: 'tool-call-delta', id, delta: block.arguments };
      yield { type: 'tool-call-end', id };
    }
  }
}

/** A tool choice naming an MCP tool (by its name or server label) names its function. */
function mapChoice(choice: ToolChoice, mcpNames: Map<string, string>): ToolChoice {
  if (choice.kind === 'tool') return { kind: 'tool', name: mcpNames.get(choice.name) ?? choice.name };
  if (choice.kind === 'allowed') return { ...choice, names: choice.names.map((name) => mcpNames.get(name) ?? name) };
  return choice;
}
