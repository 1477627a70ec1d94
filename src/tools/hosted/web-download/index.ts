// svc_web_download: a URL into the conversation's workspace, through the SSRF guard (deps.fetch: public
// addresses only, every redirect hop checked again, http and https only) and the conversation's egress
// profile when one is connected, within a size and a time limit (tools.webDownload). A download over
// the size limit is refused whole: no partial file is kept.
import { mkdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { SsrfBlockedError } from '../../../providers/http/ssrf-guard';
import { withoutProxySecrets } from '../../egress-proxy';
import { ToolFailure, type HostedToolFactory, type ToolCallContext } from '../../types';
import { downloadFileName, numbered } from './file-name';

/** Where a download goes when the model names no path (workspace-relative). */
const DEFAULT_DIR = 'downloads';
/** Headroom of the call's own limit over the download's: the download's clearer message comes first. */
const CALL_LIMIT_MARGIN_MS = 5_000;

async function isDirectory(absolute: string): Promise<boolean> {
  return (await stat(absolute).catch(() => null))?.isDirectory() ?? false;
}

async function exists(absolute: string): Promise<boolean> {
  return (await stat(absolute).catch(() => null)) !== null;
}

/** The absolute path to save to, inside the workspace (the checks of Workspace.resolve apply). */
async function targetPath(ctx: ToolCallContext, requested: string | undefined, fileName: string): Promise<string> {
  if (requested !== undefined) {
    const resolved = await ctx.workspace.resolve(requested);
    if (requested.endsWith('/') || (await isDirectory(resolved))) return ctx.workspace.resolve(path.posix.join(requested, fileName));
    return resolved;
  }
  for (let n = 0; n < 1000; n += 1) {
    const candidate = await ctx.workspace.resolve(path.posix.join(DEFAULT_DIR, numbered(fileName, n)));
    if (!(await exists(candidate))) return candidate;
  }
  throw new ToolFailure(`Too many downloads named ${fileName}; give a path.`);
}

export const webDownloadTool: HostedToolFactory = (deps) => {
  const { maxBytes, timeoutMs } = deps.config.tools.webDownload;
  return {
    tools: [
      {
        type: 'svc_web_download',
        description: `Download a URL (http or https, public addresses only) into the workspace, at most ${maxBytes} bytes. Without a path it is saved under ${DEFAULT_DIR}/ with the server's file name. Answers the saved path, its size and content type.`,
        parameters: {
          type: 'object',
          properties: {
            url: { type: 'string', description: 'The http or https URL to download.' },
            path: {
              type: 'string',
              description: `Where to save it, relative to the workspace: a file (replaced if it exists) or a directory (ending in /). Default: ${DEFAULT_DIR}/<file name>.`,
            },
          },
          required: ['url'],
          additionalProperties: false,
        },
        limits: { timeoutMs: timeoutMs + CALL_LIMIT_MARGIN_MS },
        async execute(args, ctx) {
          const url = args['url'];
          if (typeof url !== 'string' || url.trim() === '') throw new ToolFailure('Argument url must be an http or https URL.');
          const requested = args['path'];
          if (requested !== undefined && typeof requested !== 'string') throw new ToolFailure('Argument path must be a string.');
          if (requested !== undefined) await ctx.workspace.resolve(requested); // a bad path fails before the download

          const proxyUrl = await deps.egress.proxyFor(ctx.orgId, ctx.conversationId);
          let response;
          try {
            response = await deps.fetch(url.trim(), { maxBytes, timeoutMs, signal: ctx.signal, ...(proxyUrl !== null ? { proxyUrl } : {}) });
          } catch (err) {
            throw new ToolFailure(withoutProxySecrets(failureMessage(err, timeoutMs), proxyUrl));
          }
          if (response.status < 200 || response.status > 299) {
            throw new ToolFailure(`The server answered HTTP ${response.status}; nothing was saved.`);
          }
          if (response.truncated) {
            throw new ToolFailure(`The download is larger than the limit of ${maxBytes} bytes; nothing was saved.`);
          }

          const target = await targetPath(ctx, requested, downloadFileName(response.url, response.headers['content-disposition']));
          await mkdir(path.dirname(target), { recursive: true });
          // Checked again once the directories exist: a link made meanwhile is still refused.
          await ctx.workspace.resolve(ctx.workspace.relative(target));
          if (await isDirectory(target)) throw new ToolFailure(`${ctx.workspace.relative(target)} is a directory.`);
          await writeFile(target, response.body);
          const contentType = response.headers['content-type'] ?? 'unknown content type';
          return { output: `Saved ${ctx.workspace.relative(target)} (${response.body.length} bytes, ${contentType}) from ${response.url}.` };
        },
      },
    ],
  };
};

/** What went wrong fetching, in words for the model (the guard's own messages are already such). */
function failureMessage(err: unknown, timeoutMs: number): string {
  // checkUrl refuses a private IP literal with the guard's own error (worded for upstream providers).
  if (err instanceof SsrfBlockedError) return `${err.host} is not reachable from this gateway (a private or special-purpose address).`;
  if (err instanceof Error) {
    if (err.name === 'TimeoutError') return `The download took longer than ${timeoutMs} ms; nothing was saved.`;
    if (err.name === 'AbortError') return 'The download was stopped; nothing was saved.';
    return err.message;
  }
  return String(err);
}
