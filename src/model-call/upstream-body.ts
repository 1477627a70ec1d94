// Builds the body that goes upstream on the pass-through path. The caller's original bytes go as they
// are unless something must change: top-level fields were taken out (a plugin transform such as
// stripFields, or the format's own fields: those members are cut from the bytes, the model's value set
// in the same pass), a DLP policy applies (re-serialised, only then), or the provider's model name
// differs (then only the model value is replaced in the bytes). The caller's parsed body is never
// mutated (a shallow copy takes the edits, and the DLP walks deep-copy what they edit).
import type { RequestContext } from '../pipeline/context';
import { editMembers } from '../formats/shared/json-members';
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
  ownFields: readonly string[] = [],
): PassThrough {
  // The caller's bytes stand for the body only while it is the caller's own (not one the route composed).
  const raw = body === ctx.body ? ctx.rawBody : null;
  const needsCopy = ctx.upstreamTransforms.length > 0 || edit !== null || ownFields.some((field) => Object.hasOwn(body, field));
  if (needsCopy) {
    const { copy, changed } = transformedCopy(ctx, body, null);
    let removed = changed;
    for (const field of ownFields) {
      if (Object.hasOwn(copy, field)) {
        delete copy[field];
        removed = true;
      }
    }
    if (edit) edit(copy);
    else if (removed && raw !== null) {
      // Fields only taken out (stripFields, the format's own fields): the other members' bytes go as sent.
      const names = removedMembers(body, copy);
      // The upstream's model name, as the re-serialised body below would carry it.
      const model = names && (clientModel !== upstreamModel || names.has('model')) ? new Map([['model', JSON.stringify(upstreamModel)]]) : undefined;
      const spliced = names && editMembers(raw, { remove: names, set: model });
      if (spliced) return { bytes: spliced, inspected: copy };
    }
    if (edit || removed) {
      const inspected = { ...copy };
      copy['model'] = upstreamModel;
      return { bytes: JSON.stringify(copy), inspected };
    }
  }
  if (raw === null) return { bytes: JSON.stringify(clientModel === upstreamModel ? body : { ...body, model: upstreamModel }), inspected: body };
  if (clientModel === upstreamModel) return { bytes: raw, inspected: body };
  return { bytes: replaceModelBytes(raw, clientModel, upstreamModel) ?? JSON.stringify({ ...body, model: upstreamModel }), inspected: body };
}

/** The keys `copy` lacks when it is `body` with members deleted and nothing else changed; else null. */
function removedMembers(body: Record<string, unknown>, copy: Record<string, unknown>): Set<string> | null {
  for (const key in copy) if (!Object.hasOwn(body, key) || copy[key] !== body[key]) return null;
  const names = new Set<string>();
  for (const key in body) if (!Object.hasOwn(copy, key)) names.add(key);
  return names;
}
