// Builds the body that goes upstream on the pass-through path. The caller's original bytes go as they
// are unless something must change: a plugin transform (e.g. stripFields) or DLP redaction changed the
// body (re-serialised, only then), or the provider's model name differs (then only the model value is
// replaced in the bytes). The caller's parsed body is never mutated (a shallow copy takes the edits).
import type { RequestContext } from '../../pipeline/context';
import { replaceModelBytes } from '../../formats/chat/replace-model-bytes';

/** Edits the shallow copy (e.g. DLP); returns true when it changed anything. */
export type BodyEdit = (copy: Record<string, unknown>) => boolean;

/** The body with transforms and the edit applied, and whether anything changed. */
export function transformedCopy(
  ctx: RequestContext,
  body: Record<string, unknown>,
  edit: BodyEdit | null,
): { copy: Record<string, unknown>; changed: boolean } {
  const copy = { ...body };
  let changed = false;
  for (const transform of ctx.upstreamTransforms) if (transform(copy)) changed = true;
  if (edit && edit(copy)) changed = true;
  return { copy, changed };
}

export function passThroughBody(
  ctx: RequestContext,
  body: Record<string, unknown>,
  clientModel: string,
  upstreamModel: string,
  edit: BodyEdit | null,
): Buffer | string {
  const needsCopy = ctx.upstreamTransforms.length > 0 || edit !== null;
  if (needsCopy) {
    const { copy, changed } = transformedCopy(ctx, body, edit);
    if (changed) {
      copy['model'] = upstreamModel;
      return JSON.stringify(copy);
    }
  }
  const raw = ctx.rawBody;
  if (raw === null) return JSON.stringify(clientModel === upstreamModel ? body : { ...body, model: upstreamModel });
  if (clientModel === upstreamModel) return raw;
  return replaceModelBytes(raw, clientModel, upstreamModel) ?? JSON.stringify({ ...body, model: upstreamModel });
}
