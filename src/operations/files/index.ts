// The Files interface (OpenAI's `files.*`): upload, list, retrieve, download, delete, and the extension
// serving share links. A file is visible to its owner and the organization's admins; anything else
// (never existed, deleted, another user's or organization's) is the same 404 with no `error.code`.
import { GatewayError } from '../../http/errors';
import { fileObject, saveFile, UPLOAD_PURPOSES, viewerOf } from '../../files/stored-files';
import { readFileUpload } from '../../files/multipart-upload';
import { checkShareLink, shareKey } from '../../files/share-link';
import type { RequestContext } from '../../pipeline/context';
import type { Principal } from '../../store/types';
import type { Handler } from '../types';
import { fileContentReply } from './file-content';

function caller(ctx: RequestContext): Principal {
  if (!ctx.principal) throw new GatewayError('unauthorized', 'Missing API key.');
  return ctx.principal;
}

function notFound(id: string): GatewayError {
  return new GatewayError('not_found', `No file found with id '${id}'.`, { param: 'file_id' });
}

const fileIdOf = (ctx: RequestContext): string => ctx.params['file_id'] ?? '';

export const createFile: Handler = async (ctx, { store, config, clock }) => {
  const principal = caller(ctx);
  const upload = await readFileUpload(ctx.req, { maxBytes: config.files.maxBytes, fileField: 'file', allowedFields: ['purpose'] });
  const purpose = upload.fields['purpose'];
  if (purpose === undefined) throw new GatewayError('validation_failed', "Invalid request: the 'purpose' field is required.", { param: 'purpose' });
  if (!(UPLOAD_PURPOSES as readonly string[]).includes(purpose)) {
    throw new GatewayError('validation_failed', `Invalid request: 'purpose' must be one of ${UPLOAD_PURPOSES.join(', ')}.`, { param: 'purpose' });
  }
  if (upload.filename.trim() === '') throw new GatewayError('validation_failed', "Invalid request: the 'file' part needs a filename.", { param: 'file' });
  const file = await saveFile(store, {
    orgId: principal.orgId,
    userId: principal.userId,
    filename: upload.filename,
    purpose,
    content: upload.content,
    mediaType: upload.mediaType,
    now: clock.now(),
  });
  ctx.resourceIds['file_id'] = file.id;
  return { status: 200, body: fileObject(file) };
};

export const listFiles: Handler = async (ctx, { store }) => {
  const limit = ctx.query['limit'] as number;
  const after = ctx.query['after'] as string | undefined;
  const purpose = ctx.query['purpose'] as string | undefined;
  const files = await store.files.listVisible(viewerOf(caller(ctx)), {
    limit: limit + 1,
    order: ctx.query['order'] === 'asc' ? 'asc' : 'desc',
    ...(after !== undefined ? { after } : {}),
    ...(purpose !== undefined ? { purpose } : {}),
  });
  const data = files.slice(0, limit).map(fileObject);
  return {
    status: 200,
    body: { object: 'list', data, has_more: files.length > limit, first_id: data[0]?.id ?? null, last_id: data[data.length - 1]?.id ?? null },
  };
};

export const retrieveFile: Handler = async (ctx, { store }) => {
  const id = fileIdOf(ctx);
  const file = await store.files.getVisible(viewerOf(caller(ctx)), id);
  if (!file) throw notFound(id);
  return { status: 200, body: fileObject(file) };
};

export const downloadFile: Handler = async (ctx, { store }) => {
  const id = fileIdOf(ctx);
  const found = await store.files.readVisible(viewerOf(caller(ctx)), id);
  if (!found) throw notFound(id);
  return fileContentReply(found.file, found.content);
};

export const deleteFile: Handler = async (ctx, { store }) => {
  const id = fileIdOf(ctx);
  if (!(await store.files.deleteVisible(viewerOf(caller(ctx)), id))) throw notFound(id);
  return { status: 200, body: { id, object: 'file', deleted: true } };
};

/** A share link: no API key; the signature over (file id, expiry) is the right to the file. */
export const downloadSharedFile: Handler = async (ctx, { store, config, clock }) => {
  const id = fileIdOf(ctx);
  const verdict = checkShareLink(await shareKey(store, config.files), id, ctx.query['expires'], ctx.query['signature'], clock.now());
  if (verdict === 'invalid') throw notFound(id);
  if (verdict === 'expired') throw new GatewayError('forbidden', 'This share link has expired; ask for a new one.');
  const found = await store.files.read(id);
  if (!found) throw notFound(id);
  return fileContentReply(found.file, found.content);
};

export const fileHandlers: Readonly<Record<string, Handler>> = {
  createFile,
  listFiles,
  retrieveFile,
  downloadFile,
  deleteFile,
  downloadSharedFile,
};
