// Token counts of a conversation's context, per resolved model (spec "POST /v1/responses" rule 6:
// compaction as history nears the model's context window). OpenAI-family models are counted with
// their real tokenizer (js-tiktoken, whose encodings ship inside the package: nothing is downloaded);
// every other model gets a characters-based estimate scaled by a per-model ratio learned from the
// input tokens its upstream reports (calibrate()).
//
// The tokenizer is loaded on first use, not at startup: parsing an encoding's ranks takes a few
// hundred milliseconds and most processes never count (a conversation far from its window is decided
// without counting, see compaction.ts).
import type { ResolvedModel } from '../providers/types';

export type Encoding = 'o200k_base' | 'cl100k_base';

/** What is used of js-tiktoken's Tiktoken (an ES module, loaded with import()). */
interface Tokenizer {
  encode(text: string, allowedSpecial: string[], disallowedSpecial: string[]): number[];
}

/**
 * The tokenizer of an OpenAI model name, by family (tiktoken's model table, whose entries are exact
 * names; a dated or suffixed name belongs to its family). null: not an OpenAI-family model.
 */
export function openAiEncoding(modelName: string): Encoding | null {
  const name = modelName.toLowerCase().replace(/^(openai|azure)\//, '');
  if (/^(gpt-4o|chatgpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|gpt-oss|codex-|o[134](-|$))/.test(name)) return 'o200k_base';
  if (/^(gpt-4|gpt-3\.5|gpt-35)/.test(name)) return 'cl100k_base';
  return null;
}

export interface TokenCounter {
  /** `tokenizer`: the model's own tokenizer; `estimate`: characters scaled by the model's calibrated ratio. */
  readonly kind: 'tokenizer' | 'estimate';
  /** Tokens of a text (an estimate rounds up and keeps a safety margin). */
  count(text: string): number;
}

/**
 * Characters per token of the uncalibrated estimate. Deliberately low (English runs near 4 on every
 * current tokenizer): before an upstream has reported anything, the estimate errs on the large side.
 */
export const CHARS_PER_TOKEN = 3;
/** An estimate is a guess: budgets built on it keep this much headroom. */
const ESTIMATE_MARGIN = 1.1;
/** Weight of a new observation in the ratio's moving average. */
const CALIBRATION_WEIGHT = 0.25;
/** Observed ratios outside this range are clamped: one odd reply must not swing the estimate wildly. */
const RATIO_BOUNDS = [0.25, 4] as const;
/** Contexts smaller than this (in raw estimated tokens) say more about fixed overheads than about text. */
const MIN_CALIBRATION_SAMPLE = 64;

/** The uncalibrated estimate of a text's tokens: what calibrate() compares with reported usage. */
export function rawEstimate(text: string): number {
  return text.length / CHARS_PER_TOKEN;
}

interface Calibration {
  ratio: number;
  samples: number;
}

/** Counts tokens for models; one per process (calibration is learned per process, per model id). */
export class TokenCounting {
  private readonly encodings = new Map<Encoding, Promise<Tokenizer>>();
  private readonly calibrations = new Map<string, Calibration>();

  /** `onCount`: told the kind and length of each text counted (the counting metric). */
  constructor(private readonly onCount?: (kind: TokenCounter['kind'], chars: number) => void) {}

  /** Which kind of counter a model gets, without loading anything. */
  kindOf(resolved: ResolvedModel): TokenCounter['kind'] {
    return this.encodingOf(resolved) === null ? 'estimate' : 'tokenizer';
  }

  /** The counter of a resolved model; the first one of an encoding loads it (once per process). */
  async counter(resolved: ResolvedModel): Promise<TokenCounter> {
    const encoding = this.encodingOf(resolved);
    if (encoding === null) return this.estimator(resolved.model.id);
    const tiktoken = await this.load(encoding);
    const onCount = this.onCount;
    return {
      kind: 'tokenizer',
      count(text) {
        onCount?.('tokenizer', text.length);
        // Special-token text (`<|endoftext|>`) in a message is text to the model: counted as such.
        return text === '' ? 0 : tiktoken.encode(text, [], []).length;
      },
    };
  }

  /** The calibrated estimate of a model (used for every model without a known tokenizer). */
  estimator(modelId: string): TokenCounter {
    const ratio = this.calibrations.get(modelId)?.ratio ?? 1;
    const onCount = this.onCount;
    return {
      kind: 'estimate',
      count(text) {
        onCount?.('estimate', text.length);
        return text === '' ? 0 : Math.ceil(rawEstimate(text) * ratio * ESTIMATE_MARGIN);
      },
    };
  }

  /** The model's current ratio of reported tokens to raw estimated tokens (1 until calibrated). */
  ratio(modelId: string): number {
    return this.calibrations.get(modelId)?.ratio ?? 1;
  }

  /**
   * Learns from one completed call: `sentEstimate` is the raw (uncalibrated, rawEstimate-based)
   * estimate of what was sent, `reportedInputTokens` the input tokens the upstream reported for it.
   * The ratio moves toward the observed one (a moving average); the first observation is taken as is.
   */
  calibrate(modelId: string, sentEstimate: number, reportedInputTokens: number): void {
    if (!(sentEstimate >= MIN_CALIBRATION_SAMPLE) || !(reportedInputTokens > 0) || !Number.isFinite(reportedInputTokens)) return;
    const observed = Math.min(RATIO_BOUNDS[1], Math.max(RATIO_BOUNDS[0], reportedInputTokens / sentEstimate));
    const known = this.calibrations.get(modelId);
    if (!known) {
      this.calibrations.set(modelId, { ratio: observed, samples: 1 });
      return;
    }
    known.ratio += CALIBRATION_WEIGHT * (observed - known.ratio);
    known.samples += 1;
  }

  private encodingOf(resolved: ResolvedModel): Encoding | null {
    return openAiEncoding(resolved.upstreamModel) ?? openAiEncoding(resolved.model.id);
  }

  private load(encoding: Encoding): Promise<Tokenizer> {
    let loading = this.encodings.get(encoding);
    if (!loading) {
      loading = loadEncoding(encoding);
      this.encodings.set(encoding, loading);
      // A failed load is retried by the next caller rather than cached.
      loading.catch(() => this.encodings.delete(encoding));
    }
    return loading;
  }
}

async function loadEncoding(encoding: Encoding): Promise<Tokenizer> {
  const { Tiktoken } = await import('js-tiktoken/lite');
  const ranks = encoding === 'o200k_base' ? await import('js-tiktoken/ranks/o200k_base') : await import('js-tiktoken/ranks/cl100k_base');
  return new Tiktoken(ranks.default);
}
