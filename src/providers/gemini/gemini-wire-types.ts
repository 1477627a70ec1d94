// The Gemini API (generativelanguage v1beta) shapes this provider reads and writes: the
// `models/{model}:generateContent` request and the GenerateContentResponse that both it and each SSE
// event of `:streamGenerateContent?alt=sse` carry. Only the fields the translation uses are typed;
// the rest pass through as unknown.

export interface GeminiBlob {
  mimeType: string;
  /** Base64 bytes. */
  data: string;
}

export interface GeminiFileData {
  mimeType?: string;
  fileUri: string;
}

export interface GeminiFunctionCall {
  /** Present on some models/surfaces; echoed back on the matching functionResponse when given. */
  id?: string;
  name: string;
  args?: Record<string, unknown>;
}

export interface GeminiFunctionResponse {
  id?: string;
  name: string;
  response: Record<string, unknown>;
}

export interface GeminiPart {
  text?: string;
  /** True on thought-summary parts (thinking models): never part of the answer text. */
  thought?: boolean;
  /** Opaque reasoning-context token Gemini 3 requires back on the function-call parts it came with. */
  thoughtSignature?: string;
  inlineData?: GeminiBlob;
  fileData?: GeminiFileData;
  functionCall?: GeminiFunctionCall;
  functionResponse?: GeminiFunctionResponse;
  [extra: string]: unknown;
}

export interface GeminiContent {
  role: 'user' | 'model';
  parts: GeminiPart[];
}

export interface GeminiFunctionDeclaration {
  name: string;
  description?: string;
  /** JSON Schema form of the parameters (the alternative to the OpenAPI-subset `parameters`). */
  parametersJsonSchema?: Record<string, unknown>;
}

export interface GeminiTool {
  functionDeclarations: GeminiFunctionDeclaration[];
}

export interface GeminiToolConfig {
  /** VALIDATED: calls or text, calls constrained to `allowedFunctionNames` (ANY: calls only). */
  functionCallingConfig: { mode: 'AUTO' | 'ANY' | 'NONE' | 'VALIDATED'; allowedFunctionNames?: string[] };
}

export interface GeminiGenerationConfig {
  temperature?: number;
  topP?: number;
  topK?: number;
  maxOutputTokens?: number;
  stopSequences?: string[];
  candidateCount?: number;
  seed?: number;
  presencePenalty?: number;
  frequencyPenalty?: number;
  responseMimeType?: string;
  /** JSON Schema form of the response schema (the alternative to the OpenAPI-subset `responseSchema`). */
  responseJsonSchema?: Record<string, unknown>;
  responseLogprobs?: boolean;
  logprobs?: number;
  thinkingConfig?: { thinkingBudget?: number; includeThoughts?: boolean };
}

export interface GeminiRequest {
  contents: GeminiContent[];
  systemInstruction?: { parts: GeminiPart[] };
  tools?: GeminiTool[];
  toolConfig?: GeminiToolConfig;
  generationConfig?: GeminiGenerationConfig;
}

export interface GeminiLogprobsCandidate {
  token?: string;
  tokenId?: number;
  logProbability?: number;
}

export interface GeminiCandidate {
  index?: number;
  content?: { role?: string; parts?: GeminiPart[] };
  finishReason?: string;
  logprobsResult?: {
    topCandidates?: { candidates?: GeminiLogprobsCandidate[] }[];
    chosenCandidates?: GeminiLogprobsCandidate[];
  };
  [extra: string]: unknown;
}

export interface GeminiUsageMetadata {
  promptTokenCount?: number;
  candidatesTokenCount?: number;
  totalTokenCount?: number;
  thoughtsTokenCount?: number;
  cachedContentTokenCount?: number;
  toolUsePromptTokenCount?: number;
}

export interface GeminiResponse {
  candidates?: GeminiCandidate[];
  promptFeedback?: { blockReason?: string; [extra: string]: unknown };
  usageMetadata?: GeminiUsageMetadata;
  modelVersion?: string;
  responseId?: string;
  /** Present instead of the above when the stream fails after it started. */
  error?: GeminiErrorBody['error'];
}

/** The Google API error envelope (google.rpc.Status as JSON). */
export interface GeminiErrorBody {
  error?: { code?: number; message?: string; status?: string; details?: unknown[] };
}
