// A canonical ModelRequest to an OpenAI chat-completions body. The request is only read, never
// modified (a retry, or another provider, sees it unchanged).
//
// Choices worth knowing:
// - The output cap goes out as `max_completion_tokens`: OpenAI deprecated `max_tokens` and its
//   reasoning models reject it; vLLM reads `max_completion_tokens` first. Ollama's OpenAI layer reads
//   only `max_tokens` (its support for the newer name is an open pull request), so a cap sent to an
//   Ollama upstream is not applied there.
// - Assistant reasoning is not sent: chat completions has no reasoning input, and the servers that
//   return `reasoning_content` document that it must not be sent back.
// - A reasoning budget without an effort (Anthropic-style callers) becomes the effort whose Gemini
//   budget it is closest to (≤1024 low, ≤8192 medium, more high); chat has no budget field.
// - Tool results: chat's tool message has no error flag, so `isError` is carried by the text alone.
// - Errors name the offending field by its canonical path (`messages[2].content[0]`): the provider
//   does not know the caller's wire format.
import type {
  AssistantPart,
  DocumentPart,
  FilePart,
  GenerationOptions,
  ImagePart,
  JsonObject,
  Message,
  ModelRequest,
  ReasoningConfig,
  TextPart,
  ToolChoice,
  ToolDefinition,
  ToolResultPart,
  UserPart,
} from '../../canonical/model';
import { GatewayError } from '../../http/errors';
import type { OpenAiChatContentPart, OpenAiChatMessage, OpenAiChatRequest, OpenAiChatToolCall, OpenAiChatToolChoice } from './openai-chat-wire-types';

function textContent(parts: readonly TextPart[]): string | OpenAiChatContentPart[] {
  // One text part goes as a plain string: every OpenAI-compatible server reads that form.
  if (parts.length === 1) return parts[0]!.text;
  return parts.map((part) => ({ type: 'text', text: part.text }));
}

function dataUrl(mediaType: string, base64: string): string {
  return `data:${mediaType};base64,${base64}`;
}

function imagePart(part: ImagePart, param: string): OpenAiChatContentPart {
  const { source } = part;
  let url: string;
  switch (source.kind) {
    case 'base64':
      url = dataUrl(source.mediaType, source.data);
      break;
    case 'url':
      url = source.url;
      break;
    case 'file-id':
    case 'text':
      throw new GatewayError(
        'bad_request',
        `An image given as ${source.kind === 'file-id' ? 'a file id' : 'text'} cannot be sent to a chat completions model; send a data: or https: URL.`,
        {
          param,
        },
      );
  }
  return { type: 'image_url', image_url: part.detail !== undefined ? { url, detail: part.detail } : { url } };
}

/** A file or document: base64 bytes as a data: URL with its name, a file id as is, text as a text part. */
function filePart(part: FilePart | DocumentPart, param: string): OpenAiChatContentPart {
  const { source } = part;
  const filename = part.type === 'file' ? part.filename : part.title;
  switch (source.kind) {
    case 'base64':
      return {
        type: 'file',
        file: filename !== undefined ? { file_data: dataUrl(source.mediaType, source.data), filename } : { file_data: dataUrl(source.mediaType, source.data) },
      };
    case 'file-id':
      return { type: 'file', file: { file_id: source.fileId } };
    case 'text':
      return { type: 'text', text: source.data };
    case 'url':
      throw new GatewayError('bad_request', 'A file given by URL cannot be sent to a chat completions model; send its bytes or a file id.', { param });
  }
}

function userPart(part: UserPart, param: string): OpenAiChatContentPart {
  switch (part.type) {
    case 'text':
      return { type: 'text', text: part.text };
    case 'image':
      return imagePart(part, param);
    case 'file':
    case 'document':
      return filePart(part, param);
    case 'native':
      if (part.format === 'chat') return part.value;
      throw new GatewayError('bad_request', `A content part of type ${String(part.value['type'])} cannot be sent to a chat completions model.`, { param });
  }
}

function userContent(parts: readonly UserPart[], param: string): string | OpenAiChatContentPart[] {
  if (parts.length === 1 && parts[0]!.type === 'text') return parts[0]!.text;
  return parts.map((part, index) => userPart(part, `${param}[${index}]`));
}

/** Undefined for a turn with nothing chat can carry (only reasoning): chat refuses an empty assistant message. */
function assistantMessage(content: readonly AssistantPart[], name: string | undefined, param: string): OpenAiChatMessage | undefined {
  const texts: string[] = [];
  const natives: OpenAiChatContentPart[] = [];
  const toolCalls: OpenAiChatToolCall[] = [];
  content.forEach((part, index) => {
    switch (part.type) {
      case 'text':
        texts.push(part.text);
        return;
      case 'tool-call':
        toolCalls.push({ id: part.id, type: 'function', function: { name: part.name, arguments: part.arguments } });
        return;
      case 'reasoning':
        return;
      case 'native':
        if (part.format !== 'chat') {
          throw new GatewayError('bad_request', `An assistant part of type ${String(part.value['type'])} cannot be sent to a chat completions model.`, {
            param: `${param}[${index}]`,
          });
        }
        natives.push(part.value);
        return;
    }
  });
  if (texts.length === 0 && natives.length === 0 && toolCalls.length === 0) return undefined;
  const text = texts.join('');
  let body: string | OpenAiChatContentPart[] | null;
  if (natives.length > 0) body = [...(text !== '' ? [{ type: 'text', text }] : []), ...natives];
  else body = texts.length > 0 ? text : null;
  const message: OpenAiChatMessage = { role: 'assistant', content: body };
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  if (name !== undefined) message.name = name;
  return message;
}

function toolMessages(results: readonly ToolResultPart[], param: string): OpenAiChatMessage[] {
  // Chat has one tool message per result.
  return results.map((result, index) => ({
    role: 'tool',
    tool_call_id: result.callId,
    content:
      typeof result.output === 'string' ? result.output : result.output.map((part, partIndex) => userPart(part, `${param}[${index}].output[${partIndex}]`)),
  }));
}

export function convertMessages(messages: readonly Message[]): OpenAiChatMessage[] {
  const out: OpenAiChatMessage[] = [];
  messages.forEach((message, index) => {
    const param = `messages[${index}].content`;
    switch (message.role) {
      case 'system':
        out.push({ role: message.developer === true ? 'developer' : 'system', content: textContent(message.content) });
        return;
      case 'user': {
        const user: OpenAiChatMessage = { role: 'user', content: userContent(message.content, param) };
        if (message.name !== undefined) user.name = message.name;
        out.push(user);
        return;
      }
      case 'assistant': {
        const assistant = assistantMessage(message.content, message.name, param);
        if (assistant) out.push(assistant);
        return;
      }
      case 'tool':
        out.push(...toolMessages(message.content, param));
        return;
    }
  });
  return out;
}

function convertTool(tool: ToolDefinition, index: number): JsonObject {
  switch (tool.kind) {
    case 'function': {
      const fn: JsonObject = { name: tool.name };
      if (tool.description !== undefined) fn['description'] = tool.description;
      if (tool.parameters !== undefined) fn['parameters'] = tool.parameters;
      if (tool.strict !== undefined) fn['strict'] = tool.strict;
      return { type: 'function', function: fn };
    }
    case 'native':
      if (tool.format === 'chat') return tool.definition;
      throw new GatewayError('unsupported_tool_type', `Tools of type ${tool.type} cannot be sent to a chat completions model.`, { param: `tools[${index}]` });
    case 'hosted':
      throw new GatewayError('unsupported_tool_type', `Tools of type ${tool.type} cannot be sent to a chat completions model.`, { param: `tools[${index}]` });
    case 'mcp':
      throw new GatewayError('unsupported_tool_type', 'MCP tools cannot be sent to a chat completions model.', { param: `tools[${index}]` });
  }
}

function convertToolChoice(choice: ToolChoice): OpenAiChatToolChoice {
  switch (choice.kind) {
    case 'auto':
    case 'none':
    case 'required':
      return choice.kind;
    case 'tool':
      return { type: 'function', function: { name: choice.name } };
    case 'allowed':
      return {
        type: 'allowed_tools',
        allowed_tools: { mode: choice.mode, tools: choice.names.map((name) => ({ type: 'function', function: { name } })) },
      };
  }
}

function reasoningEffort(reasoning: ReasoningConfig): string | undefined {
  if (reasoning.effort !== undefined) return reasoning.effort;
  if (reasoning.disabled === true || reasoning.budgetTokens === undefined) return undefined;
  if (reasoning.budgetTokens <= 1024) return 'low';
  return reasoning.budgetTokens <= 8192 ? 'medium' : 'high';
}

/** Canonical generation options to chat-completions fields (each only when the caller set it). */
export function convertOptions(options: GenerationOptions, body: OpenAiChatRequest): void {
  if (options.maxOutputTokens !== undefined) body['max_completion_tokens'] = options.maxOutputTokens;
  if (options.temperature !== undefined) body['temperature'] = options.temperature;
  if (options.topP !== undefined) body['top_p'] = options.topP;
  if (options.stop !== undefined) body['stop'] = options.stop;
  if (options.seed !== undefined) body['seed'] = options.seed;
  if (options.presencePenalty !== undefined) body['presence_penalty'] = options.presencePenalty;
  if (options.frequencyPenalty !== undefined) body['frequency_penalty'] = options.frequencyPenalty;
  if (options.n !== undefined) body['n'] = options.n;
  if (options.logprobs !== undefined) body['logprobs'] = options.logprobs;
  if (options.topLogprobs !== undefined) body['top_logprobs'] = options.topLogprobs;
  const format = options.responseFormat;
  if (format !== undefined) {
    if (format.type === 'json_schema') {
      const spec: JsonObject = { name: format.name, schema: format.schema };
      if (format.description !== undefined) spec['description'] = format.description;
      if (format.strict !== undefined) spec['strict'] = format.strict;
      body['response_format'] = { type: 'json_schema', json_schema: spec };
    } else {
      body['response_format'] = { type: format.type };
    }
  }
  const effort = options.reasoning && reasoningEffort(options.reasoning);
  if (effort !== undefined) body['reasoning_effort'] = effort;
  if (options.parallelToolCalls !== undefined) body['parallel_tool_calls'] = options.parallelToolCalls;
  if (options.user !== undefined) body['user'] = options.user;
  if (options.verbosity !== undefined) body['verbosity'] = options.verbosity;
  if (options.serviceTier !== undefined) body['service_tier'] = options.serviceTier;
  if (options.promptCacheKey !== undefined) body['prompt_cache_key'] = options.promptCacheKey;
}

/**
 * The chat-completions body for `request` sent to `upstreamModel`. Chat-format fields without a
 * canonical meaning (`request.extra` of format `chat`) go out as the caller sent them; the fields
 * this function writes win over them.
 */
export function convertModelRequestToOpenAiChat(request: ModelRequest, upstreamModel: string, stream: boolean): OpenAiChatRequest {
  const extra = request.extra?.format === 'chat' ? request.extra.fields : {};
  const body: OpenAiChatRequest = { ...extra, model: upstreamModel, messages: convertMessages(request.messages) };
  if (request.tools.length > 0) body.tools = request.tools.map(convertTool);
  if (request.toolChoice !== undefined) body.tool_choice = convertToolChoice(request.toolChoice);
  convertOptions(request.options, body);
  if (stream) {
    body.stream = true;
    // Ours to ask for: the usage chunk meters the streamed call.
    const callerOptions = extra['stream_options'];
    body.stream_options = { ...(callerOptions !== null && typeof callerOptions === 'object' ? (callerOptions as JsonObject) : {}), include_usage: true };
  } else {
    delete body.stream;
    delete body.stream_options;
  }
  return body;
}
