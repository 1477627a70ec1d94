// The canonical model: what every model call is, whatever the caller's wire format and whatever the
// upstream's. Formats (src/formats/<name>/) convert a caller's wire ⇄ canonical; providers
// (src/providers/<type>/) convert canonical ⇄ their upstream's wire. Neither imports the other (an
// ESLint rule says so): this folder is where they meet, and it imports neither.
//
// Shapes follow the Vercel AI SDK's LanguageModelV3 prompt and stream parts (a prompt of role-tagged
// messages whose content is typed parts; a stream of start/delta/end parts per content block), with
// what our formats need beyond it: Anthropic cache control and thinking signatures, hosted and MCP tool
// definitions, and the fields a caller sent that have no canonical meaning (`extra`).

export type JsonObject = Record<string, unknown>;

/** A caller wire format, and the formats a provider may speak natively (pass-through). */
export type WireFormat = 'chat' | 'completions' | 'messages' | 'responses';

// ---------------------------------------------------------------------------------------------------
// Content parts

/** Anthropic prompt caching marker (`{type: "ephemeral", ttl?}`), kept where a part or tool carries it. */
export type CacheControl = JsonObject;

export interface TextPart {
  type: 'text';
  text: string;
  /**
   * The model declined to answer and this text says so (OpenAI `refusal`, Anthropic `stop_reason:
   * refusal`): formats with a refusal of their own (Responses `refusal` content, chat `refusal`) show
   * it as that, the others as text.
   */
  refusal?: boolean;
  cacheControl?: CacheControl;
}

/** Where the bytes of an image, file or document are. */
export type MediaSource =
  | { kind: 'base64'; mediaType: string; data: string }
  /** http(s) URL (or any URL the caller gave; providers decide what they can fetch). */
  | { kind: 'url'; url: string; mediaType?: string }
  /** A provider-side file id (OpenAI `file_id`). */
  | { kind: 'file-id'; fileId: string }
  /** Plain text content (Anthropic text documents). */
  | { kind: 'text'; mediaType: string; data: string };

export interface ImagePart {
  type: 'image';
  source: MediaSource;
  /** OpenAI's `detail` hint (auto/low/high). */
  detail?: string;
  cacheControl?: CacheControl;
}

export interface FilePart {
  type: 'file';
  source: MediaSource;
  filename?: string;
  cacheControl?: CacheControl;
}

/** An Anthropic-style document (PDF or text) with its optional title, context and citations switch. */
export interface DocumentPart {
  type: 'document';
  source: MediaSource;
  title?: string;
  context?: string;
  citations?: JsonObject;
  cacheControl?: CacheControl;
}

/**
 * Model reasoning. `text` is the readable thinking (Anthropic `thinking`, OpenAI reasoning summary or
 * content); `signature` Anthropic's integrity token; `redactedData` Anthropic's `redacted_thinking`
 * payload; `encryptedContent` OpenAI's opaque reasoning. A thinking model continuing after a tool call
 * needs these back unchanged.
 */
export interface ReasoningPart {
  type: 'reasoning';
  text: string;
  signature?: string;
  redactedData?: string;
  encryptedContent?: string;
  /** The Responses reasoning item id, when it came from one. */
  id?: string;
  /** Responses reasoning summaries, one entry per summary part (when the text came as a summary). */
  summary?: string[];
}

/** A call of a function tool by the model. `arguments` is JSON text, exactly as the model wrote it. */
export interface ToolCallPart {
  type: 'tool-call';
  id: string;
  name: string;
  arguments: string;
  /** The Responses `function_call` item id (distinct from the call id), when it came from one. */
  itemId?: string;
}

/** A tool's result, paired with the call by `callId`. */
export interface ToolResultPart {
  type: 'tool-result';
  callId: string;
  output: string | (TextPart | ImagePart | FilePart | DocumentPart)[];
  isError?: boolean;
  cacheControl?: CacheControl;
}

/**
 * A part of a wire format with no canonical meaning (an Anthropic `server_tool_use` or `search_result`
 * block, an OpenAI item type we do not model). Sent verbatim by a provider speaking `format`; any other
 * provider refuses it (400 naming it) rather than losing it silently.
 */
export interface NativePart {
  type: 'native';
  format: WireFormat;
  value: JsonObject;
}

export type UserPart = TextPart | ImagePart | FilePart | DocumentPart | NativePart;
export type AssistantPart = TextPart | ReasoningPart | ToolCallPart | NativePart;

export type Message =
  /** System-level text: chat `system`/`developer` messages, Anthropic `system`, Responses `instructions`. */
  | { role: 'system'; content: TextPart[]; developer?: boolean }
  | { role: 'user'; content: UserPart[]; name?: string }
  | { role: 'assistant'; content: AssistantPart[]; name?: string }
  | { role: 'tool'; content: ToolResultPart[] };

// ---------------------------------------------------------------------------------------------------
// Tools

export type ToolDefinition =
  | { kind: 'function'; name: string; description?: string; parameters?: JsonObject; strict?: boolean; cacheControl?: CacheControl }
  /** One of our hosted `svc_*` tools (executed by the gateway's tool loop, never sent upstream as is). */
  | { kind: 'hosted'; type: string; config: JsonObject }
  /** A remote MCP server's tools (the gateway connects to it). */
  | { kind: 'mcp'; serverLabel: string; config: JsonObject }
  /** Any other tool type (a provider built-in such as `web_search_preview` or `bash_20250124`): forwarded verbatim. */
  | { kind: 'native'; format: WireFormat; type: string; definition: JsonObject };

export type ToolChoice =
  | { kind: 'auto' }
  | { kind: 'none' }
  | { kind: 'required' }
  | { kind: 'tool'; name: string }
  /** Responses `{type: allowed_tools, mode, tools}`: the model may call only these. */
  | { kind: 'allowed'; mode: 'auto' | 'required'; names: string[] };

// ---------------------------------------------------------------------------------------------------
// Request

export type ResponseFormat =
  { type: 'text' } | { type: 'json_object' } | { type: 'json_schema'; name: string; schema: JsonObject; description?: string; strict?: boolean };

export type ReasoningEffort = 'none' | 'minimal' | 'low' | 'medium' | 'high' | 'xhigh';

export interface ReasoningConfig {
  /** OpenAI effort; providers with a token budget map it (providers/<type>/ owns the table). */
  effort?: ReasoningEffort;
  /** An explicit thinking budget (Anthropic `thinking.budget_tokens`, Gemini `thinkingBudget`). */
  budgetTokens?: number;
  /** Thinking explicitly switched off (Anthropic `thinking: {type: disabled}`). */
  disabled?: boolean;
  /** Responses `reasoning.summary` (auto/concise/detailed). */
  summary?: string;
}

/** Generation options. Each key is one the caller set; a provider lists those it honours (`Provider.honours`). */
export interface GenerationOptions {
  maxOutputTokens?: number;
  temperature?: number;
  topP?: number;
  topK?: number;
  stop?: string[];
  seed?: number;
  presencePenalty?: number;
  frequencyPenalty?: number;
  /** Number of choices (only 1 is rendered by the non-OpenAI paths). */
  n?: number;
  logprobs?: boolean;
  topLogprobs?: number;
  responseFormat?: ResponseFormat;
  reasoning?: ReasoningConfig;
  parallelToolCalls?: boolean;
  /** End-user id (OpenAI `user`, Anthropic `metadata.user_id`). */
  user?: string;
  /** Ask the upstream for JSON-structured verbosity (Responses `text.verbosity`). */
  verbosity?: string;
  serviceTier?: string;
  promptCacheKey?: string;
}

export type OptionName = keyof GenerationOptions;

export interface ModelRequest {
  /** The model id as the caller named it (the provider receives the upstream's name separately). */
  model: string;
  messages: Message[];
  tools: ToolDefinition[];
  toolChoice?: ToolChoice;
  options: GenerationOptions;
  /**
   * Fields of the caller's wire format with no canonical meaning, by their wire name. A provider whose
   * upstream speaks the same format (`Provider.extrasOf`) sends them; any other drops them and the call
   * reports them in `x-gateway-dropped-params`.
   */
  extra?: { format: WireFormat; fields: JsonObject };
}

// ---------------------------------------------------------------------------------------------------
// Response

export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter' | 'error' | 'other';

export interface Usage {
  inputTokens: number;
  outputTokens: number;
  /** Input tokens read from a prompt cache (included in inputTokens). */
  cachedInputTokens?: number;
  /** Input tokens written to a prompt cache (Anthropic). */
  cacheCreationInputTokens?: number;
  /** Output tokens spent on reasoning (included in outputTokens). */
  reasoningTokens?: number;
}

export interface ModelResponse {
  /** The upstream's id for the reply (formats may mint their own). */
  id: string;
  /** The upstream's model name as it reported it. */
  model: string;
  /** Unix seconds. */
  created: number;
  content: AssistantPart[];
  finishReason: FinishReason;
  /**
   * The upstream's own stop reason when a format can say more than `finishReason` (Anthropic
   * `end_turn`/`stop_sequence`/`pause_turn`/`refusal`, OpenAI `function_call`).
   */
  rawFinishReason?: string;
  /** The stop sequence that ended generation, when the upstream says which. */
  stopSequence?: string | null;
  usage: Usage;
}

// ---------------------------------------------------------------------------------------------------
// Stream parts
//
// A stream is: `start`, then content blocks each opened, filled and closed (`*-start`, `*-delta`,
// `*-end`, sharing a block `id` unique within the stream; blocks may interleave), then exactly one
// `finish`. A failure ends it early: an `error` part (an error the upstream reported in its stream) or
// a thrown error (transport failures); consumers treat both alike, and nothing follows either. A
// provider that learns a tool call's arguments only at the end sends one delta with all of them
// before `tool-call-end`. Usage is reported once, in `finish`.

export type StreamPart =
  | { type: 'start'; id: string; model: string; created: number }
  /** `refusal`: the block is the model's refusal (TextPart.refusal), not an answer. */
  | { type: 'text-start'; id: string; refusal?: boolean }
  | { type: 'text-delta'; id: string; delta: string }
  | { type: 'text-end'; id: string }
  | { type: 'reasoning-start'; id: string; redactedData?: string; encryptedContent?: string }
  | { type: 'reasoning-delta'; id: string; delta: string }
  /** Closes a reasoning block; `signature` is Anthropic's, known only at the end of the block. */
  | { type: 'reasoning-end'; id: string; signature?: string }
  | { type: 'tool-call-start'; id: string; callId: string; name: string }
  | { type: 'tool-call-delta'; id: string; delta: string }
  | { type: 'tool-call-end'; id: string }
  /** A block of the upstream's own format the canonical model does not describe (server tool use...). */
  | { type: 'native'; format: WireFormat; value: JsonObject }
  /**
   * The gateway executed a server-side tool call (a hosted `svc_*` tool or an MCP tool) that the model
   * made earlier in the stream (`callId`): its output, or why it failed (the model is shown that too).
   * Only the tool loop (src/tools/loop.ts) emits it; providers never do.
   */
  | { type: 'server-tool-result'; callId: string; output: string; status: 'completed' | 'failed'; error?: string }
  | { type: 'finish'; finishReason: FinishReason; rawFinishReason?: string; stopSequence?: string | null; usage: Usage }
  /** A failure after the stream started; the consumer ends its stream with its format's error event. */
  | { type: 'error'; error: Error };

export type StreamPartType = StreamPart['type'];

/** Zero usage, for replies that report none. */
export const NO_USAGE: Usage = Object.freeze({ inputTokens: 0, outputTokens: 0 });
