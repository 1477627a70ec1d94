// The spans of model calls, tool calls, runs and run steps, after the OpenTelemetry GenAI semantic
// conventions (gen-ai-spans, gen-ai-agent-spans). Attribute names are spelled here rather than imported
// from @opentelemetry/semantic-conventions/incubating: its GenAI names are not stable, and this module is
// loaded whether or not tracing is on. Only identifiers, names, counts and codes are recorded: never a
// prompt, a completion, tool arguments or output, or a key.
import type { FinishReason, Usage } from '../canonical/model';
import type { ProviderType } from '../config/types';
import type { TraceSpan, Tracing } from './tracing';

export const GEN_AI_OPERATION_NAME = 'gen_ai.operation.name';
/** The current name of the provider attribute (semantic conventions 1.37 and later). */
export const GEN_AI_PROVIDER_NAME = 'gen_ai.provider.name';
/** Its earlier name, still read by most backends. */
export const GEN_AI_SYSTEM = 'gen_ai.system';
export const GEN_AI_REQUEST_MODEL = 'gen_ai.request.model';
export const GEN_AI_RESPONSE_MODEL = 'gen_ai.response.model';
export const GEN_AI_RESPONSE_ID = 'gen_ai.response.id';
export const GEN_AI_RESPONSE_FINISH_REASONS = 'gen_ai.response.finish_reasons';
export const GEN_AI_USAGE_INPUT_TOKENS = 'gen_ai.usage.input_tokens';
export const GEN_AI_USAGE_OUTPUT_TOKENS = 'gen_ai.usage.output_tokens';
export const GEN_AI_CONVERSATION_ID = 'gen_ai.conversation.id';
export const GEN_AI_AGENT_ID = 'gen_ai.agent.id';
export const GEN_AI_AGENT_NAME = 'gen_ai.agent.name';
export const GEN_AI_TOOL_NAME = 'gen_ai.tool.name';
export const GEN_AI_TOOL_CALL_ID = 'gen_ai.tool.call.id';
export const GEN_AI_TOOL_TYPE = 'gen_ai.tool.type';

export type GenAiOperation = 'chat' | 'text_completion';

/** The conventions' well-known provider names (current, and the earlier `gen_ai.system` values). */
const PROVIDER_NAMES: Record<ProviderType, { provider: string; system: string }> = {
  openai: { provider: 'openai', system: 'openai' },
  anthropic: { provider: 'anthropic', system: 'anthropic' },
  'bedrock-anthropic': { provider: 'aws.bedrock', system: 'aws.bedrock' },
  'vertex-anthropic': { provider: 'gcp.vertex_ai', system: 'vertex_ai' },
  gemini: { provider: 'gcp.gemini', system: 'gemini' },
  demo: { provider: 'agent-gateway.demo', system: 'agent-gateway.demo' },
};

export interface ModelCallTarget {
  /** The configured model id (what the caller named). */
  modelId: string;
  /** The provider's own name of the model (what the upstream is asked for). */
  upstreamModel: string;
  /** The configured provider's name and type. */
  providerName: string;
  providerType: ProviderType;
}

/**
 * A model call's span, `{operation} {upstream model}` (CLIENT): the upstream model is the one the
 * request is made to (`gen_ai.request.model`); the configured id the caller named is `agw.model`.
 */
export function startModelCallSpan(tracing: Tracing, operation: GenAiOperation, target: ModelCallTarget, purpose?: string): ModelCallSpan {
  const names = PROVIDER_NAMES[target.providerType];
  const span = tracing.start(`${operation} ${target.upstreamModel}`, 'client', {
    [GEN_AI_OPERATION_NAME]: operation,
    [GEN_AI_PROVIDER_NAME]: names.provider,
    [GEN_AI_SYSTEM]: names.system,
    [GEN_AI_REQUEST_MODEL]: target.upstreamModel,
    'agw.model': target.modelId,
    'agw.provider': target.providerName,
    'agw.model_call.purpose': purpose,
  });
  return new ModelCallSpan(span);
}

/** What a model call's span learns as the call goes (each set once), and its end. */
export class ModelCallSpan {
  private reported = false;

  constructor(readonly span: TraceSpan) {}

  usage(usage: Usage): void {
    if (this.reported) return;
    this.reported = true;
    this.span.set({ [GEN_AI_USAGE_INPUT_TOKENS]: usage.inputTokens, [GEN_AI_USAGE_OUTPUT_TOKENS]: usage.outputTokens });
  }

  response(reply: { id?: string; model?: string; finishReason?: FinishReason }): void {
    this.span.set({
      [GEN_AI_RESPONSE_ID]: reply.id === '' ? undefined : reply.id,
      [GEN_AI_RESPONSE_MODEL]: reply.model === '' ? undefined : reply.model,
      [GEN_AI_RESPONSE_FINISH_REASONS]: reply.finishReason === undefined ? undefined : [reply.finishReason],
    });
  }

  /** Ends the span; `errorType` (a stable error code) marks it failed. */
  end(errorType?: string): void {
    if (errorType !== undefined) this.span.fail(errorType);
    this.span.end();
  }

  run<T>(fn: () => T): T {
    return this.span.run(fn);
  }
}
