// Runs a text extraction in a worker thread of its own (extract-worker.ts): the gateway's event loop
// never parses a document, the parse has a heap limit, and the call's signal (its time limit, or the
// response stopping) terminates it wherever it is.
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { ToolFailure } from '../../types';
import type { ExtractReply, ExtractRequest } from './extract-worker';

/** Heap of one extraction: a document larger than this once parsed is refused, not the gateway's memory. */
const WORKER_HEAP_MB = 512;

/** The worker's entry: the compiled .js in a build, the .ts source under tsx (tests). */
function workerEntry(): { file: string; execArgv: string[] } {
  const source = __filename.endsWith('.ts');
  const file = path.join(__dirname, `extract-worker${source ? '.ts' : '.js'}`);
  return { file, execArgv: source ? ['--require', require.resolve('tsx/cjs')] : [] };
}

export async function extractText(request: ExtractRequest, signal: AbortSignal): Promise<Extract<ExtractReply, { ok: true }>> {
  signal.throwIfAborted();
  const { file, execArgv } = workerEntry();
  // A copy the worker owns (transferred, not cloned): the store's buffer may be a slice of a larger one.
  const content = new Uint8Array(request.content);
  const worker = new Worker(file, {
    execArgv,
    workerData: { ...request, content } satisfies ExtractRequest,
    transferList: [content.buffer],
    resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB },
    stdout: true,
    stderr: true,
  });
  // PDF.js warns on stdout about fonts and malformed objects: not the gateway's log's business.
  worker.stdout.resume();
  worker.stderr.resume();
  let onAbort: (() => void) | null = null;
  try {
    const reply = await new Promise<ExtractReply>((resolve, reject) => {
      onAbort = () => reject(signal.reason instanceof Error ? signal.reason : new ToolFailure('The extraction was stopped.'));
      signal.addEventListener('abort', onAbort, { once: true });
      worker.once('message', (message: ExtractReply) => resolve(message));
      worker.once('error', (err: Error & { code?: string }) =>
        reject(err.code === 'ERR_WORKER_OUT_OF_MEMORY' ? new ToolFailure(`The file needs more than ${WORKER_HEAP_MB} MB to extract its text.`) : err),
      );
      worker.once('exit', (code) => reject(new Error(`the extraction worker exited (code ${code}) without an answer`)));
    });
    if (!reply.ok) throw new ToolFailure(reply.message);
    return reply;
  } finally {
    if (onAbort) signal.removeEventListener('abort', onAbort);
    await worker.terminate();
  }
}
