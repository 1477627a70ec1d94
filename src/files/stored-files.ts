// Stored files as the API shows them (OpenAI's file object) and as the gateway makes them: the one
// place an upload (POST /v1/files) and a tool's output (svc_file_share_with_user) become a record.
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { lookup } from 'mime-types';
import type { Store } from '../store/port';
import type { FileViewer, Principal, StoredFileRecord } from '../store/types';

/** The purposes an upload may name (OpenAI's `FilePurpose`). */
export const UPLOAD_PURPOSES = ['assistants', 'batch', 'fine-tune', 'vision', 'user_data', 'evals'] as const;
/** The purpose of files the gateway's tools made (never given by an upload). */
export const TOOL_OUTPUT_PURPOSE = 'tool_output';

const GENERIC_TYPE = 'application/octet-stream';
const MAX_FILENAME_CHARS = 255;

/** OpenAI's file object (GET /v1/files/{file_id}). */
export interface FileObject {
  id: string;
  object: 'file';
  bytes: number;
  created_at: number;
  filename: string;
  purpose: string;
  /** Deprecated by OpenAI, still typed by its SDKs: a stored file is always `processed` here. */
  status: 'processed';
}

export function fileObject(file: StoredFileRecord): FileObject {
  return {
    id: file.id,
    object: 'file',
    bytes: file.bytes,
    created_at: Math.floor(Date.parse(file.createdAt) / 1000),
    filename: file.filename,
    purpose: file.purpose,
    status: 'processed',
  };
}

/** An API caller as a viewer of stored files. */
export function viewerOf(principal: Principal): FileViewer {
  return { orgId: principal.orgId, userId: principal.userId, admin: principal.role === 'admin' };
}

/**
 * The name a file is stored under: its last path segment (a client's `C:\Users\…\a.pdf` or a
 * workspace's `out/a.pdf` keeps `a.pdf`), without control characters, at most 255 characters.
 */
export function cleanFilename(raw: string): string {
  const last = raw.split(/[\\/]/).pop() ?? '';
  const cleaned = last.replace(/[\u0000-\u001f\u007f]/g, '').trim();
  const name = cleaned === '' || cleaned === '.' || cleaned === '..' ? 'file' : cleaned;
  if (name.length <= MAX_FILENAME_CHARS) return name;
  const extension = path.extname(name).slice(0, 16);
  return name.slice(0, MAX_FILENAME_CHARS - extension.length) + extension;
}

/** The given media type unless it says nothing (octet-stream, absent): then one guessed from the name. */
export function mediaTypeOf(filename: string, given?: string): string {
  const stated = given?.split(';')[0]?.trim().toLowerCase();
  if (stated && stated !== GENERIC_TYPE && /^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+$/.test(stated)) return stated;
  return lookup(filename) || GENERIC_TYPE;
}

export function newFileId(): string {
  return `file-${randomBytes(12).toString('hex')}`;
}

export interface NewStoredFile {
  orgId: string;
  userId: string | null;
  filename: string;
  purpose: string;
  content: Buffer;
  /** As given (an upload's part type); guessed from the name when absent or generic. */
  mediaType?: string;
  now: Date;
}

/** Stores the bytes and the record of a new file and returns the record. */
export async function saveFile(store: Store, input: NewStoredFile): Promise<StoredFileRecord> {
  const filename = cleanFilename(input.filename);
  const file: StoredFileRecord = {
    id: newFileId(),
    orgId: input.orgId,
    userId: input.userId,
    filename,
    purpose: input.purpose,
    bytes: input.content.length,
    mediaType: mediaTypeOf(filename, input.mediaType),
    createdAt: input.now.toISOString(),
  };
  await store.files.create(file, input.content);
  return file;
}
