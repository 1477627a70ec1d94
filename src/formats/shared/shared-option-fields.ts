// Option fields that chat completions, legacy completions and Messages spell alike and read alike, each
// with the canonical option it sets and the type its value must have. A converter names the ones its
// format has, in its own order: the order options are set is the order x-gateway-dropped-params lists them.
import type { GenerationOptions, JsonObject, OptionName } from '../../canonical/model';
import type { OptionsBuilder } from './canonical-request';
import { readInteger, readNumber, readStringList } from './read-fields';

type FieldReader = (body: JsonObject, out: OptionsBuilder, field: string) => void;

function option<K extends OptionName>(key: K, read: (body: JsonObject, field: string) => GenerationOptions[K] | undefined): FieldReader {
  return (body, out, field) => out.set(key, read(body, field), field);
}

const SHARED_OPTION_FIELDS = {
  max_tokens: option('maxOutputTokens', readInteger),
  temperature: option('temperature', readNumber),
  top_p: option('topP', readNumber),
  top_k: option('topK', readInteger),
  stop: option('stop', readStringList),
  seed: option('seed', readInteger),
  presence_penalty: option('presencePenalty', readNumber),
  frequency_penalty: option('frequencyPenalty', readNumber),
  n: option('n', readInteger),
} satisfies Record<string, FieldReader>;

export type SharedOptionField = keyof typeof SHARED_OPTION_FIELDS;

/** Reads `fields` of `body` into `out`, in the order given, each under its own name. */
export function readSharedOptions(body: JsonObject, out: OptionsBuilder, fields: readonly SharedOptionField[]): void {
  for (const field of fields) SHARED_OPTION_FIELDS[field](body, out, field);
}
