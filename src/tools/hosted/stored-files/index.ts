// svc_files_download_original, svc_files_download_as_text: the stored files (POST /v1/files uploads,
// files tools shared) of the call's user, by id. A tool sees the files of the conversation's user in
// its organization, as that user does through the API (an organization admin's tool call too: a
// model acts for its user, not with an admin's reach); any other id is "no such file".
import { mkdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { cleanFilename } from '../../../files/stored-files';
import type { StoredFileRecord } from '../../../store/types';
import { ToolFailure, type HostedTool, type HostedToolFactory, type ToolCallContext, type ToolDeps } from '../../types';
import { stringArg, viewerOfCall } from './call-args';
import { textKindOf } from './file-kind';
import { extractText } from './text-extraction';

/** Characters extracted at most (the rest of a longer text is not read). */
const MAX_EXTRACTED_CHARS = 10 * 1024 * 1024;
/** Room kept in the output for the header and the note saying where the full text is. */
const FRAME_BYTES = 600;

/** A stored file of the call's user, with its bytes; ToolFailure for any other id. */
async function readStoredFile(deps: ToolDeps, args: Record<string, unknown>, ctx: ToolCallContext): Promise<{ file: StoredFileRecord; content: Buffer }> {
  const id = stringArg(args, 'file_id');
  if (id === undefined) throw new ToolFailure('Argument file_id is required.');
  const found = await deps.store.files.readVisible(viewerOfCall(ctx), id.trim());
  if (!found)
    throw new ToolFailure(
      `No stored file with id ${JSON.stringify(id)} (ids look like file-…; the user's uploads and shared files are listed by GET /v1/files).`,
    );
  return found;
}

const describe = (file: StoredFileRecord): string => `${file.filename} (${file.id}, ${file.mediaType}, ${file.bytes} bytes)`;

/** The UTF-8 prefix of `text` at most `bytes` long, never ending inside a character. */
function utf8Prefix(text: string, bytes: number): string {
  const buffer = Buffer.from(text, 'utf8');
  if (buffer.length <= bytes) return text;
  let end = bytes;
  // Back off continuation bytes (10xxxxxx) so the cut falls between characters.
  while (end > 0 && ((buffer[end] ?? 0) & 0xc0) === 0x80) end--;
  return buffer.subarray(0, end).toString('utf8');
}

function downloadOriginal(deps: ToolDeps): HostedTool {
  return {
    type: 'svc_files_download_original',
    description:
      'Copy a stored file (by its file_id, e.g. one the user uploaded) byte for byte into the workspace, where the shell and the file tools can use it. Says where it was saved.',
    parameters: {
      type: 'object',
      properties: {
        file_id: { type: 'string', description: 'The stored file id, file-….' },
        path: {
          type: 'string',
          description: 'Where to save it, relative to the workspace (default: files/<its file name>). An existing file there is replaced.',
        },
      },
      required: ['file_id'],
      additionalProperties: false,
    },
    async execute(args, ctx) {
      const { file, content } = await readStoredFile(deps, args, ctx);
      const relative = stringArg(args, 'path') ?? `files/${cleanFilename(file.filename)}`;
      const target = await ctx.workspace.resolve(relative);
      if (target === (await ctx.workspace.ensure())) throw new ToolFailure('Name a file to save to, not the workspace itself.');
      await mkdir(path.dirname(target), { recursive: true });
      // Re-checked once the directories exist: a link made meanwhile is still refused.
      await ctx.workspace.resolve(relative);
      if ((await stat(target).catch(() => null))?.isDirectory()) throw new ToolFailure(`${relative} is a directory; name a file.`);
      await writeFile(target, content);
      return { output: `Saved ${describe(file)} to ${ctx.workspace.relative(target)} in the workspace.` };
    },
  };
}

function downloadAsText(deps: ToolDeps): HostedTool {
  return {
    type: 'svc_files_download_as_text',
    description:
      'Read a stored file (by its file_id) as text: PDF, DOCX, HTML, CSV, JSON (pretty-printed) and plain text. A long text is cut; the full text is then saved in the workspace to read in slices.',
    parameters: {
      type: 'object',
      properties: { file_id: { type: 'string', description: 'The stored file id, file-….' } },
      required: ['file_id'],
      additionalProperties: false,
    },
    async execute(args, ctx) {
      const { file, content } = await readStoredFile(deps, args, ctx);
      const kind = textKindOf(file, content);
      if (kind === null) {
        throw new ToolFailure(
          `${describe(file)} is not a type text can be extracted from (PDF, DOCX, HTML, CSV, JSON or plain text); svc_files_download_original copies it into the workspace as it is.`,
        );
      }
      const extracted = await extractText({ kind, content, maxChars: MAX_EXTRACTED_CHARS }, ctx.signal);
      const note = [extracted.note, extracted.truncated ? `only the first ${MAX_EXTRACTED_CHARS} characters were extracted` : null].filter(Boolean).join('; ');
      const header = `${describe(file)} as text${note ? ` (${note})` : ''}:\n`;
      const budget = Math.max(1024, deps.config.tools.maxOutputBytes - FRAME_BYTES);
      const size = Buffer.byteLength(extracted.text);
      if (size <= budget) return { output: header + extracted.text };
      // Too long to show whole: the model sees the start and reads on from the saved text.
      const saved = `files/${file.id}.txt`;
      const target = await ctx.workspace.resolve(saved);
      await mkdir(path.dirname(target), { recursive: true });
      await writeFile(target, extracted.text);
      const shown = utf8Prefix(extracted.text, budget);
      const shownBytes = Buffer.byteLength(shown);
      return {
        output: `${header}${shown}\n[… ${size - shownBytes} more bytes. The full text (${size} bytes) is saved in the workspace at ${saved}; read on with svc_file_read, path ${saved}, offset ${shownBytes}.]`,
      };
    },
  };
}

export const storedFileTools: HostedToolFactory = (deps) => ({ tools: [downloadOriginal(deps), downloadAsText(deps)] });
