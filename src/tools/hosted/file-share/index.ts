// svc_file_share_with_user: a signed, expiring download link for a workspace file (stored first, as a
// file of the call's user with purpose `tool_output`, so what tools make is in the store and in
// GET /v1/files like any upload) or for a stored file of the user's. The link is served by the gateway
// without an API key (src/files/share-link.ts) and is in this call's output, which the user sees in
// the `svc_call` item: the model is told not to repeat it in its reply.
import { constants as fsConstants } from 'node:fs';
import { open } from 'node:fs/promises';
import path from 'node:path';
import { publicBaseUrl, shareKey, shareLink } from '../../../files/share-link';
import { saveFile, TOOL_OUTPUT_PURPOSE } from '../../../files/stored-files';
import type { StoredFileRecord } from '../../../store/types';
import { ToolFailure, type HostedTool, type HostedToolFactory, type ToolCallContext, type ToolDeps } from '../../types';
import { stringArg, viewerOfCall } from '../stored-files/call-args';

/** Reads a workspace file of at most `maxBytes` (one handle: the size checked is the size read). */
async function readWorkspaceFile(ctx: ToolCallContext, relative: string, maxBytes: number): Promise<Buffer> {
  const target = await ctx.workspace.resolve(relative);
  let handle;
  try {
    // Without blocking: a FIFO (which svc_shell can make) would hold one of libuv's few threads for good.
    handle = await open(target, fsConstants.O_RDONLY | fsConstants.O_NONBLOCK);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new ToolFailure(`No such file in the workspace: ${relative}`);
    if ((err as NodeJS.ErrnoException).code === 'ENXIO') throw new ToolFailure(`${relative} is not a file.`);
    throw err;
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw new ToolFailure(`${relative} is not a file.`);
    if (info.size > maxBytes) throw new ToolFailure(`${relative} is ${info.size} bytes; files of at most ${maxBytes} bytes can be shared (files.maxBytes).`);
    return await handle.readFile();
  } finally {
    await handle.close();
  }
}

function lifetimeOf(args: Record<string, unknown>, deps: ToolDeps): number {
  const given = args['expires_in_seconds'];
  const { shareTtlSeconds, maxShareTtlSeconds } = deps.config.files;
  if (given === undefined || given === null) return shareTtlSeconds;
  if (typeof given !== 'number' || !Number.isInteger(given) || given < 1 || given > maxShareTtlSeconds) {
    throw new ToolFailure(`expires_in_seconds must be a whole number from 1 to ${maxShareTtlSeconds}.`);
  }
  return given;
}

function shareWithUser(deps: ToolDeps): HostedTool {
  return {
    type: 'svc_file_share_with_user',
    description:
      'Give the user a download link for a file: a workspace file (by path) or a stored file (by file_id). The link expires. The user sees the link with this tool call: do not repeat it in your reply.',
    parameters: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'A workspace file to share, relative to the workspace.' },
        file_id: { type: 'string', description: 'Or a stored file id, file-….' },
        expires_in_seconds: {
          type: 'integer',
          minimum: 1,
          maximum: deps.config.files.maxShareTtlSeconds,
          description: `How long the link works (default ${deps.config.files.shareTtlSeconds}).`,
        },
      },
      additionalProperties: false,
    },
    async execute(args, ctx) {
      const relative = stringArg(args, 'path');
      const fileId = stringArg(args, 'file_id');
      if ((relative === undefined) === (fileId === undefined))
        throw new ToolFailure('Give either path (a workspace file) or file_id (a stored file), not both.');
      const lifetime = lifetimeOf(args, deps);
      let file: StoredFileRecord;
      if (relative !== undefined) {
        const content = await readWorkspaceFile(ctx, relative, deps.config.files.maxBytes);
        file = await saveFile(deps.store, {
          orgId: ctx.orgId,
          userId: ctx.userId,
          filename: path.basename(relative),
          purpose: TOOL_OUTPUT_PURPOSE,
          content,
          now: deps.now(),
        });
      } else {
        const found = await deps.store.files.getVisible(viewerOfCall(ctx), fileId!.trim());
        if (!found) throw new ToolFailure(`No stored file with id ${JSON.stringify(fileId)}.`);
        file = found;
      }
      const expires = Math.floor(deps.now().getTime() / 1000) + lifetime;
      const link = shareLink(await shareKey(deps.store, deps.config.files), publicBaseUrl(deps.config.server, ctx.baseUrl), file.id, expires);
      return {
        output:
          `Shared ${file.filename} (${file.id}, ${file.bytes} bytes) with the user until ${new Date(expires * 1000).toISOString()}.\n` +
          `Download link: ${link.url}\n` +
          'The user sees this link with this tool call; do not repeat it in your reply.',
      };
    },
  };
}

export const fileShareTools: HostedToolFactory = (deps) => ({ tools: [shareWithUser(deps)] });
