// Compaction of a stored conversation (spec "POST /v1/responses" rule 6): when the history plus the
// new turn nears the model's context window (models[].contextWindow), the oldest turns are summarised
// by one model call into a `compaction` item stored in the conversation; the caller's instructions,
// the new turn and the most recent turns are sent verbatim after the summary.
//
// Cost, in order: a cheap check on every turn (the context size the upstream reported for the last
// turn plus a byte bound of the new one: no tokenizer, no history walk), the model's token count
// (tokenizer or calibrated estimate) only when that bound nears the window, and the summary call only
// when the count says so. At most one summary call per turn: a turn the plan does not fit after it
// drops further oldest items instead of summarising twice.
import type { JsonObject, ModelRequest } from '../canonical/model';
import { GatewayError } from '../http/errors';
import type { CallScope, ModelCalls } from '../model-call/model-calls';
import type { ModelRouter, ResolvedModel } from '../providers/types';
import type { Store } from '../store/port';
import type { ConversationItemRecord, ConversationRecord, ConversationSummary, NewConversationItem } from '../store/types';
import { clipCap, fitCut, planCompaction, type Budget, type PlanItem } from './compaction-plan';
import { callLink, itemChars, itemTokenBound, itemTokens, startsTurn, transcriptEntry } from './context-items';
import { CHARS_PER_TOKEN, type TokenCounter, type TokenCounting } from './tokens';

export interface CompactionSettings {
  /** The model that writes summaries (absent: the conversation's own). */
  model?: string;
  /** Compact when the context would pass this share of the window. */
  threshold: number;
  /** A compaction brings the context down to about this share, so the next turns have room. */
  target: number;
}

/** How a conversation's stored history is sent: the lead's history.ts renders both. */
export interface HistoryRendering {
  /** The item the model is sent in place of the summarised turns. */
  summaryItem(text: string): JsonObject;
  /** A stored item as the model is sent it; null for what it is not sent (reasoning, compaction...). */
  modelItem(item: ConversationItemRecord): JsonObject | null;
}

export interface TurnContext {
  /** The conversation as the turn holds it (its summary and last context size). */
  conversation: Pick<ConversationRecord, 'id' | 'summary' | 'contextTokens'>;
  /** Its stored items after the summary, oldest first. */
  items: readonly ConversationItemRecord[];
  /** The new turn's items as they will be sent. */
  input: readonly JsonObject[];
  /** The composed instructions (curated prompt and the caller's), or null. */
  instructions: string | null;
  /** The request's tools, as sent. */
  tools: unknown;
  /** The request's max_output_tokens, when set. */
  maxOutputTokens: number | null;
  /** The response this turn generates (the compaction item is attributed to it). */
  responseId: string;
}

export type ContextOutcome = 'far' | 'counted' | 'compacted' | 'no_window';

export interface PreparedContext {
  /** The summary to send first (the conversation's, a new one, or null). */
  summary: ConversationSummary | null;
  /** The stored items to send verbatim after it. */
  items: readonly ConversationItemRecord[];
  /** Text to append after the composed instructions when a summary is sent (null: none). */
  hint: string | null;
  outcome: ContextOutcome;
  /** After the turn: feeds the upstream's reported input tokens to the model's calibration. */
  calibrate(reportedInputTokens: number): void;
}

export interface CompactionDeps {
  store: Pick<Store, 'conversations'>;
  modelCalls: Pick<ModelCalls, 'generate' | 'models'>;
  models: Pick<ModelRouter, 'resolve'>;
  tokens: TokenCounting;
  history: HistoryRendering;
  settings: CompactionSettings;
  mintItemId(): string;
  /** Told each turn's outcome (the metric). */
  onOutcome?(outcome: ContextOutcome): void;
}

export const COMPACTION_HINT =
  'Earlier turns of this conversation were summarised to fit the context window: the summary message at the start ' +
  'stands for them. Rely on it for earlier details, and say so when a detail you need is not in it rather than guessing.';

const SUMMARISER_PROMPT = (maxTokens: number): string =>
  [
    'You compress conversations so that they can be continued later without the original turns.',
    'Summarise the conversation below (and the earlier summary, when there is one) into one self-contained summary that keeps:',
    "the user's goals, requests and constraints; decisions made and their reasons; facts, figures, names, identifiers, file",
    'paths and URLs that were stated; tools called and what they returned; open questions and unfinished tasks.',
    'Drop greetings, repetition and wording. Write plain prose or short bullet points, no preamble.',
    `Stay well under ${maxTokens} tokens.`,
  ].join(' ');

/** Tokens kept free for the reply when the request sets no max_output_tokens. */
function defaultReserve(window: number): number {
  return Math.min(Math.ceil(window * 0.15), 8192);
}

/** The longest summary asked for. */
function summaryBudgetOf(window: number): number {
  return Math.min(Math.ceil(window * 0.15), 2048);
}

/** Text that holds no counted content gets this when clipped. */
const CLIP_MARK = ' […]';

export class ConversationCompaction {
  constructor(private readonly deps: CompactionDeps) {}

  /** The token counting (and per-model calibration) this service uses. */
  get tokens(): TokenCounting {
    return this.deps.tokens;
  }

  /**
   * The context of a turn: what of the stored history to send, compacting first when it nears the
   * window (one summary call, stored with its item before this returns).
   */
  async prepare(turn: TurnContext, resolved: ResolvedModel, scope: CallScope): Promise<PreparedContext> {
    const { conversation } = turn;
    const summary = conversation.summary ?? null;
    const window = resolved.model.contextWindow;
    const unchanged = (outcome: ContextOutcome, counter?: TokenCounter): PreparedContext =>
      this.prepared(outcome, summary, turn.items, turn, resolved, counter);
    if (window === undefined) return this.told(unchanged('no_window'));

    const reserve = Math.min(turn.maxOutputTokens ?? defaultReserve(window), Math.floor(window / 2));
    const settings = this.deps.settings;
    if (this.cheapBound(turn, reserve) <= settings.threshold * window) return this.told(unchanged('far'));

    const counter = await this.deps.tokens.counter(resolved);
    const rendering = this.deps.history;
    const sent = turn.items.map((item) => rendering.modelItem(item));
    const planItems: PlanItem[] = turn.items.map((_, i) => planItem(sent[i] ?? null, counter));
    const pending = new Set(
      turn.input.flatMap((item) => {
        const link = callLink(item);
        return link && 'closes' in link ? [link.closes] : [];
      }),
    );
    const fixed = this.fixedTokens(turn, counter);
    const currentSummary = summary ? itemTokens(rendering.summaryItem(summary.text), counter) : 0;
    const summaryTokens = summaryBudgetOf(window);
    const budget: Budget = { window, reserve, fixed, threshold: settings.threshold, target: settings.target, summaryTokens };
    const plan = planCompaction(planItems, currentSummary, budget, pending);
    if (plan.action === 'none') return this.told(unchanged('counted', counter));

    const text = await this.summarise(sent.slice(0, plan.cut), summary, resolved, scope, summaryTokens);
    const clipped = clipText(text, summaryTokens, counter);
    const written = itemTokens(rendering.summaryItem(clipped), counter);
    const cut = fitCut(planItems, plan.cut, written, budget, pending);
    const omitted = cut - plan.cut;
    const finalText = omitted > 0 ? `${clipped}\n(${omitted} later item${omitted === 1 ? ' was' : 's were'} left out to fit the context window.)` : clipped;
    const through = turn.items[cut - 1]!.position;
    const next: ConversationSummary = { text: finalText, through, itemId: this.deps.mintItemId() };
    await this.deps.store.conversations.setSummary(conversation.id, next, compactionItem(next, turn.responseId));
    return this.told(this.prepared('compacted', next, turn.items.slice(cut), turn, resolved, counter));
  }

  /**
   * An upper bound of the turn's context without counting: the size the upstream reported after the
   * last turn (it held the history, the instructions and tools of then, and the reply), plus byte
   * bounds of the new turn, of this turn's instructions and tools (they may have changed), and the
   * reply's reserve. Without a reported size (a first turn, or an upstream that reported none), the
   * history's byte bound.
   */
  private cheapBound(turn: TurnContext, reserve: number): number {
    let bound = reserve + byteBound(turn.instructions) + byteBound(turn.tools === undefined ? null : JSON.stringify(turn.tools));
    for (const item of turn.input) bound += itemTokenBound(item);
    const reported = turn.conversation.contextTokens;
    if (typeof reported === 'number') return bound + reported;
    if (turn.conversation.summary) bound += byteBound(turn.conversation.summary.text);
    for (const item of turn.items) {
      const sent = this.deps.history.modelItem(item);
      if (sent) bound += itemTokenBound(sent);
    }
    return bound;
  }

  /** Tokens sent besides the history and the summary (the hint included: a compacted turn sends it). */
  private fixedTokens(turn: TurnContext, counter: TokenCounter): number {
    let tokens = counter.count(turn.instructions ?? '') + counter.count(COMPACTION_HINT);
    if (Array.isArray(turn.tools) && turn.tools.length > 0) tokens += counter.count(JSON.stringify(turn.tools));
    for (const item of turn.input) tokens += itemTokens(item, counter);
    return tokens;
  }

  /** One summary call: the earlier summary and the items to fold in, as a transcript that fits its model. */
  private async summarise(
    sent: readonly (JsonObject | null)[],
    previous: ConversationSummary | null,
    resolved: ResolvedModel,
    scope: CallScope,
    maxTokens: number,
  ): Promise<string> {
    const summariser = this.summariser(resolved, scope.orgId);
    const counter = await this.deps.tokens.counter(summariser);
    const window = summariser.model.contextWindow ?? resolved.model.contextWindow ?? 0;
    const prompt = SUMMARISER_PROMPT(maxTokens);
    // Room for the transcript: the summariser's window less its prompt, its reply and a tenth of slack.
    const room = Math.floor(window * 0.9) - counter.count(prompt) - maxTokens - 16;
    const entries = [
      ...(previous ? [`Summary of the conversation before this part:\n${previous.text}`] : []),
      ...sent.flatMap((item) => (item ? (transcriptEntry(item) ?? []) : [])),
    ];
    const transcript = fitTranscript(entries, room, counter);
    const request: ModelRequest = {
      model: summariser.model.id,
      messages: [
        { role: 'system', content: [{ type: 'text', text: prompt }] },
        { role: 'user', content: [{ type: 'text', text: `The conversation to summarise:\n\n${transcript}` }] },
      ],
      tools: [],
      options: { maxOutputTokens: maxTokens },
    };
    const response = await this.deps.modelCalls.generate(scope, request);
    const text = response.content
      .flatMap((part) => (part.type === 'text' ? [part.text] : []))
      .join('')
      .trim();
    if (text === '') {
      throw new GatewayError('upstream_error', 'The model returned an empty summary when compacting the conversation; send the turn again.');
    }
    return text;
  }

  /** The model that writes the summary: the configured one when the organization may use it, else the conversation's. */
  private summariser(resolved: ResolvedModel, orgId: string): ResolvedModel {
    const wanted = this.deps.settings.model;
    if (wanted === undefined || wanted === resolved.model.id) return resolved;
    try {
      return this.deps.models.resolve(orgId, wanted);
    } catch {
      return resolved;
    }
  }

  private prepared(
    outcome: ContextOutcome,
    summary: ConversationSummary | null,
    items: readonly ConversationItemRecord[],
    turn: TurnContext,
    resolved: ResolvedModel,
    counter?: TokenCounter,
  ): PreparedContext {
    const tokens = this.deps.tokens;
    const rendering = this.deps.history;
    const hint = summary ? COMPACTION_HINT : null;
    return {
      summary,
      items,
      hint,
      outcome,
      calibrate(reportedInputTokens) {
        // Only estimates learn; a tokenizer's count is already the model's.
        if ((counter?.kind ?? tokens.kindOf(resolved)) === 'tokenizer') return;
        let chars = (turn.instructions?.length ?? 0) + (hint?.length ?? 0);
        if (Array.isArray(turn.tools) && turn.tools.length > 0) chars += JSON.stringify(turn.tools).length;
        if (summary) chars += itemChars(rendering.summaryItem(summary.text));
        for (const item of items) {
          const sent = rendering.modelItem(item);
          if (sent) chars += itemChars(sent);
        }
        for (const item of turn.input) chars += itemChars(item);
        tokens.calibrate(resolved.model.id, chars / CHARS_PER_TOKEN, reportedInputTokens);
      },
    };
  }

  private told(prepared: PreparedContext): PreparedContext {
    this.deps.onOutcome?.(prepared.outcome);
    return prepared;
  }
}

function planItem(sent: JsonObject | null, counter: TokenCounter): PlanItem {
  if (!sent) return { tokens: 0, startsTurn: false };
  const link = callLink(sent);
  return {
    tokens: itemTokens(sent, counter),
    startsTurn: startsTurn(sent),
    ...(link && 'opens' in link ? { opens: link.opens } : {}),
    ...(link && 'closes' in link ? { closes: link.closes } : {}),
  };
}

const byteBound = (text: string | null): number => (text === null ? 0 : Buffer.byteLength(text, 'utf8'));

/** The stored item that carries a summary (listed with the conversation's items). */
export function compactionItem(summary: ConversationSummary, responseId: string): NewConversationItem {
  return {
    id: summary.itemId,
    type: 'compaction',
    role: null,
    data: { type: 'compaction', summary: summary.text, through: summary.through },
    status: 'completed',
    idempotencyKey: null,
    responseId,
  };
}

/** A text cut to about `maxTokens` by `counter` (by characters, in proportion), marked when cut. */
export function clipText(text: string, maxTokens: number, counter: TokenCounter): string {
  let tokens = counter.count(text);
  let clipped = text;
  while (tokens > maxTokens && clipped.length > 0) {
    const keep = Math.max(0, Math.floor((clipped.length * maxTokens) / tokens) - CLIP_MARK.length - 8);
    clipped = text.slice(0, keep) + CLIP_MARK;
    tokens = counter.count(clipped);
    if (keep === 0) break;
  }
  return clipped;
}

/** The transcript of `entries` within `room` tokens: the longest entries clipped alike (clipCap). */
export function fitTranscript(entries: readonly string[], room: number, counter: TokenCounter): string {
  const separator = '\n\n';
  const sizes = entries.map((entry) => counter.count(entry) + 2);
  let budget = room;
  for (let attempt = 0; attempt < 5; attempt++) {
    const cap = clipCap(sizes, budget);
    const text = entries.map((entry, i) => (sizes[i]! > cap ? clipText(entry, Math.max(cap - 2, 1), counter) : entry)).join(separator);
    if (counter.count(text) <= room) return text;
    budget = Math.floor(budget * 0.8);
  }
  return clipText(entries.join(separator), room, counter);
}
