// The worker thread that turns a stored file's bytes into text (text-extraction.ts starts one per
// call). Parsing a document is CPU work on untrusted input: here it blocks no request, runs under a
// heap limit of its own, and is terminated when the call's time is up.
//   PDF: unpdf (PDF.js, serverless build: no native code, no worker of its own), page by page.
//   DOCX: mammoth's raw text. HTML: html-to-text. JSON: pretty-printed. CSV and plain text: as they are.
// Each library is loaded by the kind that needs it (a worker starts fresh for every call).
/* eslint-disable @typescript-eslint/no-require-imports */
import { parentPort, workerData } from 'node:worker_threads';
import type { TextKind } from './file-kind';

export interface ExtractRequest {
  kind: TextKind;
  content: Uint8Array;
  /** Characters kept; extraction stops once it has this many. */
  maxChars: number;
}

export type ExtractReply =
  /** `note`: what the reader should know (pages, invalid JSON shown as it is). */
  | { ok: true; text: string; truncated: boolean; note: string | null }
  /** `message`: why the file cannot be read, for the model. */
  | { ok: false; message: string };

/** Thrown for a file that cannot be read as its kind: its message is for the model. */
class Unreadable extends Error {}

function decodeText(content: Uint8Array): string {
  // A byte order mark is not text (TextDecoder drops a UTF-8 BOM itself; ignoreBOM: false is its default).
  return new TextDecoder('utf-8').decode(content);
}

async function pdfText(content: Uint8Array, maxChars: number): Promise<{ text: string; note: string }> {
  const { getDocumentProxy } = require('unpdf') as typeof import('unpdf');
  let doc: Awaited<ReturnType<typeof getDocumentProxy>>;
  try {
    doc = await getDocumentProxy(content);
  } catch (err) {
    throw new Unreadable(`it could not be read as a PDF (${(err as Error).message})`);
  }
  const pages: string[] = [];
  let length = 0;
  for (let number = 1; number <= doc.numPages && length < maxChars; number++) {
    const page = await doc.getPage(number);
    const items = (await page.getTextContent()).items as Array<{ str?: string; hasEOL?: boolean }>;
    const text = items
      .map((item) => (item.str ?? '') + (item.hasEOL ? '\n' : ''))
      .join('')
      .trim();
    pages.push(`[page ${number}]\n${text}`);
    length += text.length;
  }
  if (length === 0) return { text: '', note: `${doc.numPages} page(s) without a text layer (scanned images?)` };
  return { text: pages.join('\n\n'), note: `${doc.numPages} page(s)` };
}

async function docxText(content: Uint8Array): Promise<string> {
  const mammoth = require('mammoth') as typeof import('mammoth');
  try {
    return (await mammoth.extractRawText({ buffer: Buffer.from(content.buffer, content.byteOffset, content.byteLength) })).value;
  } catch (err) {
    throw new Unreadable(`it could not be read as a DOCX document (${(err as Error).message})`);
  }
}

function jsonText(content: Uint8Array): { text: string; note: string | null } {
  const raw = decodeText(content);
  try {
    return { text: JSON.stringify(JSON.parse(raw) as unknown, null, 2), note: null };
  } catch (err) {
    return { text: raw, note: `not valid JSON (${(err as Error).message}); shown as it is` };
  }
}

export async function extract(request: ExtractRequest): Promise<ExtractReply> {
  const { kind, content, maxChars } = request;
  try {
    let text: string;
    let note: string | null = null;
    switch (kind) {
      case 'pdf':
        ({ text, note } = await pdfText(content, maxChars));
        break;
      case 'docx':
        text = await docxText(content);
        break;
      case 'html':
        text = (require('html-to-text') as typeof import('html-to-text')).convert(decodeText(content), {
          wordwrap: false,
          selectors: [{ selector: 'img', format: 'skip' }],
        });
        break;
      case 'json':
        ({ text, note } = jsonText(content));
        break;
      case 'csv':
      case 'text':
        text = decodeText(content);
        break;
    }
    const truncated = text.length > maxChars;
    return { ok: true, text: truncated ? text.slice(0, maxChars) : text, truncated, note };
  } catch (err) {
    if (err instanceof Unreadable) return { ok: false, message: err.message };
    throw err;
  }
}

if (parentPort) {
  const port = parentPort;
  extract(workerData as ExtractRequest).then(
    (reply) => port.postMessage(reply),
    (err: unknown) =>
      port.postMessage({ ok: false, message: `extraction failed (${err instanceof Error ? err.message : String(err)})` } satisfies ExtractReply),
  );
}
