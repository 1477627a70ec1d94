// Builds the body that goes upstream on the pass-through path. The caller's original bytes go as they
// are unless something must change: a plugin transform (e.g. stripFields) changed the body, or a DLP
// policy applies (re-serialised, only then), or the provider's model name differs (then only the model
// value is replaced in the bytes). The caller's parsed body is never mutated (a shallow copy takes the
// edits, and the DLP walks deep-copy what they edit).
import type { RequestContext } from '../pipeline/context';
import { replaceModelBytes } from './replace-model-bytes';

/**
 * Inspects and edits the shallow copy in place (DLP). With an edit the body is always re-serialised:
 * what goes upstream is then exactly what was inspected, never the caller's bytes, in which a
 * duplicated key's first copy (JSON.parse keeps the last) would travel uninspected.
 */
export type BodyEdit = (copy: Record<string, unknown>) => void;

/** The body with transforms and the edit applied, and whether anything changed. */
export function transformedCopy(
  ctx: RequestContext,
  body: Record<string, unknown>,
  edit: BodyEdit | null,
): { copy: Record<string, unknown>; changed: boolean } {
  const copy = { ...body };
  let changed = false;
  for (const transform of ctx.upstreamTransforms) if (transform(copy)) changed = true;
  if (edit) {
    edit(copy);
    changed = true;
  }
  return { copy, changed };
}

/** The bytes to forward, and the body they encode after policy (the caller's model name kept). */
export interface PassThrough {
  bytes: Buffer | string;
  inspected: Record<string, unknown>;
}

export function passThroughBody(
  ctx: RequestContext,
  body: Record<string, unknown>,
  clientModel: string,
  upstreamModel: string,
  edit: BodyEdit | null,
): PassThrough {
  const needsCopy = ctx.upstreamTransforms.length > 0 || edit !== null;
  if (needsCopy) {
    const { copy, changed } = transformedCopy(ctx, body, edit);
    if (changed) {
      const inspected = { ...copy };
      copy['model'] = upstreamModel;
      return { bytes: JSON.stringify(copy), inspected };
    }
  }
  // The caller's bytes stand for the body only while it is the caller's own (not one the route composed).
  const raw = body === ctx.body ? ctx.rawBody : null;
  if (raw === null) return { bytes: JSON.stringify(clientModel === upstreamModel ? body : { ...body, model: upstreamModel }), inspected: body };
  if (clientModel === upstreamModel) return { bytes: raw, inspected: body };
  return { bytes: replaceModelBytes(raw, clientModel, upstreamModel) ?? JSON.stringify({ ...body, model: upstreamModel }), inspected: body };
}
