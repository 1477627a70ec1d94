// What every format's request converter returns: the canonical request, and the caller's own name for
// each generation option it set, so that an option a provider cannot honour is reported under the name
// the caller used (x-gateway-dropped-params), e.g. `max_completion_tokens` rather than maxOutputTokens.
import type { GenerationOptions, ModelRequest, OptionName } from '../../canonical/model';

/** OptionName → the caller's field (a dotted path when nested: `metadata.user_id`). */
export type FieldNames = Partial<Record<OptionName, string>>;

export interface CanonicalRequest {
  request: ModelRequest;
  fieldNames: FieldNames;
}

/** Collects the options a converter reads, each with the caller's name for it. */
export class OptionsBuilder {
  readonly options: GenerationOptions = {};
  readonly fieldNames: FieldNames = {};

  set<K extends OptionName>(key: K, value: GenerationOptions[K] | undefined, field: string): void {
    if (value === undefined) return;
    this.options[key] = value;
    this.fieldNames[key] = field;
  }
}
