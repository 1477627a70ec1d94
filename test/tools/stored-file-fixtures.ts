// Small documents made in the test (no binary fixtures in the repository): a PDF by pdf-lib, a DOCX by
// the docx package, and the tool deps and call context of a conversation over a real store.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Document, Packer, Paragraph, TextRun } from 'docx';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import type { GatewayConfig } from '../../src/config/types';
import { createLogger } from '../../src/log/logger';
import type { Store } from '../../src/store/port';
import type { ToolCallContext, ToolDeps } from '../../src/tools/types';
import { createWebAccess } from '../../src/tools/web-access';
import { Workspaces } from '../../src/tools/workspace';

/** A PDF with one page per entry of `pages` (an empty string: a page with no text layer). */
export async function makePdf(pages: readonly string[]): Promise<Buffer> {
  const pdf = await PDFDocument.create();
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  for (const text of pages) {
    const page = pdf.addPage([400, 300]);
    if (text !== '') page.drawText(text, { x: 20, y: 200, size: 12, font });
  }
  return Buffer.from(await pdf.save());
}

export async function makeDocx(paragraphs: readonly string[]): Promise<Buffer> {
  const doc = new Document({ sections: [{ children: paragraphs.map((text) => new Paragraph({ children: [new TextRun(text)] })) }] });
  return Packer.toBuffer(doc);
}

export interface ToolHarness {
  deps: ToolDeps;
  workspaces: Workspaces;
  /** A call of `userId` (default u-member of acme) in conversation `conversationId`. */
  context(options?: { orgId?: string; userId?: string | null; conversationId?: string; signal?: AbortSignal; baseUrl?: string }): ToolCallContext;
  close(): Promise<void>;
}

export async function toolHarness(config: GatewayConfig, store: Store, now: () => Date = () => new Date()): Promise<ToolHarness> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'agw-workspaces-'));
  const workspaces = new Workspaces(root);
  const web = createWebAccess(['127.0.0.1']);
  const deps: ToolDeps = {
    config,
    store,
    logger: createLogger({ level: 'error', silent: process.env['TEST_LOGS'] !== '1' }),
    now,
    workspaces,
    fetch: web.fetch,
    egress: { proxyFor: () => Promise.resolve(null) },
  };
  return {
    deps,
    workspaces,
    context(options = {}) {
      const orgId = options.orgId ?? 'acme';
      const conversationId = options.conversationId ?? 'conv-files';
      return {
        orgId,
        userId: options.userId === undefined ? 'u-member' : options.userId,
        conversationId,
        signal: options.signal ?? new AbortController().signal,
        workspace: workspaces.of(orgId, conversationId),
        ...(options.baseUrl !== undefined ? { baseUrl: options.baseUrl } : {}),
      };
    },
    async close() {
      await web.close();
      await rm(root, { recursive: true, force: true });
    },
  };
}
