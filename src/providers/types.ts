// The provider layer's interface. Client formats (chat completions, Responses, completions, Anthropic
// messages) meet providers in the middle, at the canonical model (src/canonical/model.ts). Each provider
// folder (providers/<type>/) owns its upstream's wire format and the translation to and from it.
import type { ModelConfig, ProviderConfig, ProviderType } from '../config/types';
import type { UpstreamResponse } from './http/transport';
import type { CallSignal } from './http/call-abort';
import type { ModelRequest, ModelResponse, OptionName, StreamPart, WireFormat } from '../canonical/model';

export type JsonObject = Record<string, unknown>;

export interface CallOptions {
  /** Aborts the upstream call (client disconnect, run cancellation, timeout). */
  signal?: AbortSignal;
  requestId?: string;
}

/** A model id resolved for an organization: the model's config and the provider serving it. */
export interface ResolvedModel {
  model: ModelConfig;
  /** The provider's own name for the model. */
  upstreamModel: string;
  provider: Provider;
}

/**
 * A client wire format a provider may speak natively: `chat` (OpenAI chat completions), `completions`
 * (OpenAI legacy completions), `messages` (Anthropic Messages).
 */
export type WireOperation = WireFormat;

export interface ForwardOptions extends Omit<CallOptions, 'signal'> {
  /** Aborts the forwarded call: an AbortSignal, or the request's cheaper CallAbort. */
  signal?: CallSignal;
  /** The body asks for a stream (the reply is then the upstream's own event stream). */
  stream: boolean;
}

export interface Provider {
  readonly name: string;
  readonly type: ProviderType;
  readonly config: ProviderConfig;
  /**
   * Pass-through: the client formats this provider speaks natively. For these the route sends the
   * caller's bytes (model name adjusted, transforms applied) through forward() and relays the reply
   * bytes untouched; every other format goes through generate()/stream() and the canonical model.
   */
  readonly forwards?: readonly WireOperation[];
  /**
   * Sends a body already in the provider's wire format for `operation` (its model already the
   * upstream's) and returns the upstream reply unparsed (2xx only; errors throw GatewayError).
   */
  forward?(operation: WireOperation, body: string | Buffer, options: ForwardOptions): Promise<UpstreamResponse>;
  /**
   * The canonical generation options this provider's upstream honours. Options a caller set outside
   * this set are not sent, and the call reports them (x-gateway-dropped-params), never silently.
   */
  readonly honours: ReadonlySet<OptionName>;
  /**
   * Options among `honours` that this request's own values keep the provider from sending (e.g. a
   * reasoning effort with no room under the caller's output limit): left out, and reported like the others.
   */
  unhonoured?(request: ModelRequest): readonly OptionName[];
  /** The wire format whose unmodelled fields (ModelRequest.extra) this provider's upstream accepts. */
  readonly extrasOf?: WireFormat;
  /** Whether the upstream enforces `strict` on function tools (else it is not sent, and reported dropped). */
  readonly strictTools?: boolean;
  /**
   * One model call through the canonical model (every non-pass-through path): canonical request →
   * upstream wire → upstream reply → canonical reply. `upstreamModel` is the provider's name for the
   * model; the reply's `model` is the upstream's. Errors throw GatewayError.
   */
  generate(request: ModelRequest, upstreamModel: string, options: CallOptions): Promise<ModelResponse>;
  /** The same call streamed: canonical stream parts (see src/canonical/model.ts for their order). */
  stream(request: ModelRequest, upstreamModel: string, options: CallOptions): AsyncIterable<StreamPart>;
  close(): Promise<void>;
}

/** What the rest of the service (handlers, agent runs, the Responses interface) calls. */
export interface ModelRouter {
  /** Models the organization may use, in config order. */
  list(orgId: string): ModelConfig[];
  /** Throws GatewayError model_not_found when the model is unknown or not allowed for the organization. */
  resolve(orgId: string, modelId: string): ResolvedModel;
  close(): Promise<void>;
}
