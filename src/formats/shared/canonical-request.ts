// What every format's request converter returns: the canonical request, and the caller's own name for
// each generation option it set, so that an option a provider cannot honour is reported under the name
// the caller used (x-gateway-dropped-params), e.g. `max_completion_tokens` rather than maxOutputTokens.
import type { ModelRequest, OptionName } from '../../canonical/model';

/** OptionName → the caller's field (a dotted path when nested: `metadata.user_id`). */
export type FieldNames = Partial<Record<OptionName, string>>;

export interface CanonicalRequest {
  request: ModelRequest;
  fieldNames: FieldNames;
}
