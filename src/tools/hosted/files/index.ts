// svc_file_read, svc_file_write, svc_file_list: the conversation's workspace (workspace.ts), the
// same directory the shell's sandbox works in. Paths are workspace-relative; traversal and links out
// are refused. Reads are bounded (a slice by offset and length), writes too (tools.files limits).
import { constants as fsConstants } from 'node:fs';
import { mkdir, open, readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { ToolFailure, type HostedTool, type HostedToolFactory, type ToolCallContext } from '../../types';

/** Largest write accepted in one call, and largest slice read. */
const MAX_WRITE_BYTES = 5 * 1024 * 1024;
const DEFAULT_READ_BYTES = 64 * 1024;
const MAX_LIST_ENTRIES = 1000;

const stringArg = (args: Record<string, unknown>, name: string, fallback?: string): string => {
  const value = args[name];
  if (value === undefined && fallback !== undefined) return fallback;
  if (typeof value !== 'string') throw new ToolFailure(`Argument ${name} must be a string.`);
  return value;
};

const intArg = (args: Record<string, unknown>, name: string, fallback: number, max: number): number => {
  const value = args[name];
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) throw new ToolFailure(`Argument ${name} must be a non-negative integer.`);
  return Math.min(value, max);
};

async function notFoundAware<T>(relative: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new ToolFailure(`No such file or directory: ${relative}`);
    if (code === 'EISDIR') throw new ToolFailure(`${relative} is a directory; use svc_file_list.`);
    if (code === 'ENOTDIR') throw new ToolFailure(`${relative} is not a directory.`);
    if (code === 'ENXIO') throw new ToolFailure(`${relative} is not a regular file.`);
    throw err;
  }
}

const fileRead: HostedTool = {
  type: 'svc_file_read',
  description: 'Read a text file of the workspace. Paths are relative to the workspace. Large files are read in slices: give offset (bytes) and length.',
  parameters: {
    type: 'object',
    properties: {
      path: { type: 'string', description: 'File path, relative to the workspace.' },
      offset: { type: 'integer', minimum: 0, description: 'Byte offset to start at (default 0).' },
      length: { type: 'integer', minimum: 1, description: `Bytes to read (default ${DEFAULT_READ_BYTES}).` },
    },
    required: ['path'],
    additionalProperties: false,
  },
  async execute(args, ctx: ToolCallContext) {
    const relative = stringArg(args, 'path');
    const target = await ctx.workspace.resolve(relative);
    return notFoundAware(relative, async () => {
      // Opened without blocking, then judged by what was opened: a FIFO the shell made is refused, not
      // waited on (a blocked open holds one of libuv's few threads for good).
      const handle = await open(target, fsConstants.O_RDONLY | fsConstants.O_NONBLOCK);
      try {
        const info = await handle.stat();
        if (info.isDirectory()) throw new ToolFailure(`${relative} is a directory; use svc_file_list.`);
        if (!info.isFile()) throw new ToolFailure(`${relative} is not a regular file.`);
        const offset = intArg(args, 'offset', 0, info.size);
        const length = intArg(args, 'length', DEFAULT_READ_BYTES, MAX_WRITE_BYTES);
        const buffer = Buffer.alloc(Math.min(length, Math.max(0, info.size - offset)));
        const { bytesRead } = await handle.read(buffer, 0, buffer.length, offset);
        const text = buffer.subarray(0, bytesRead).toString('utf8');
        const rest = info.size - offset - bytesRead;
        return { output: rest > 0 ? `${text}\n[… ${rest} more bytes; read on with offset ${offset + bytesRead}]` : text };
      } finally {
        await handle.close();
      }
    });
  },
};

const fileWrite: HostedTool = {
  type: 'svc_file_write',
  description: 'Write a text file in the workspace (created with its directories, or replaced; append: true adds to its end).',
  parameters: {
    type: 'object',
    properties: {
      path: { type: 'string', description: 'File path, relative to the workspace.' },
      content: { type: 'string', description: 'The text to write.' },
      append: { type: 'boolean', description: 'Append instead of replacing (default false).' },
    },
    required: ['path', 'content'],
    additionalProperties: false,
  },
  async execute(args, ctx) {
    const relative = stringArg(args, 'path');
    const content = stringArg(args, 'content');
    const size = Buffer.byteLength(content);
    if (size > MAX_WRITE_BYTES) throw new ToolFailure(`The content is ${size} bytes; at most ${MAX_WRITE_BYTES} can be written in one call.`);
    const target = await ctx.workspace.resolve(relative);
    if (target === (await ctx.workspace.ensure())) throw new ToolFailure('Name a file to write, not the workspace itself.');
    await mkdir(path.dirname(target), { recursive: true });
    // Re-checked after the directories exist: a link made meanwhile is still refused.
    await ctx.workspace.resolve(relative);
    const append = args['append'] === true;
    await notFoundAware(relative, async () => {
      // As for reading: a FIFO (or socket) is refused at once, never waited on.
      const flags = fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_NONBLOCK | (append ? fsConstants.O_APPEND : 0);
      const handle = await open(target, flags, 0o666);
      try {
        if (!(await handle.stat()).isFile()) throw new ToolFailure(`${relative} is not a regular file.`);
        if (!append) await handle.truncate(0);
        await handle.writeFile(content);
      } finally {
        await handle.close();
      }
    });
    return { output: `Wrote ${size} bytes to ${ctx.workspace.relative(target)}.` };
  },
};

const fileList: HostedTool = {
  type: 'svc_file_list',
  description: 'List the files and directories in a workspace directory (default: the workspace root), with sizes.',
  parameters: {
    type: 'object',
    properties: { path: { type: 'string', description: 'Directory, relative to the workspace (default ".").' } },
    additionalProperties: false,
  },
  async execute(args, ctx) {
    const relative = stringArg(args, 'path', '.');
    const target = await ctx.workspace.resolve(relative);
    return notFoundAware(relative, async () => {
      const entries = await readdir(target, { withFileTypes: true });
      entries.sort((a, b) => a.name.localeCompare(b.name));
      const lines: string[] = [];
      for (const entry of entries.slice(0, MAX_LIST_ENTRIES)) {
        if (entry.isDirectory()) lines.push(`${entry.name}/`);
        else if (entry.isSymbolicLink()) lines.push(`${entry.name} (link)`);
        else {
          const info = await stat(path.join(target, entry.name)).catch(() => null);
          lines.push(`${entry.name}\t${info?.size ?? '?'} bytes`);
        }
      }
      if (entries.length > MAX_LIST_ENTRIES) lines.push(`[… ${entries.length - MAX_LIST_ENTRIES} more entries]`);
      return { output: lines.length > 0 ? lines.join('\n') : `${ctx.workspace.relative(target)} is empty.` };
    });
  },
};

export const workspaceFileTools: HostedToolFactory = () => ({ tools: [fileRead, fileWrite, fileList] });
