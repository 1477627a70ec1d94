// svc_files_download_original and svc_files_download_as_text on a real store and workspace: the
// bytes copied as they are, text extracted per type by the real libraries (PDF, DOCX, HTML, CSV, JSON,
// plain text), types without text refused naming the type, long text cut and saved, other users'
// files invisible, a stopped call stopping its extraction.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { saveFile } from '../../src/files/stored-files';
import { HOSTED_TOOL_FACTORIES } from '../../src/tools/catalog';
import { storedFileTools } from '../../src/tools/hosted/stored-files';
import { ToolFailure, type HostedTool } from '../../src/tools/types';
import { testConfig } from '../helpers/config';
import { openTestStore, type TestStore } from '../helpers/store';
import { makeDocx, makePdf, toolHarness, type ToolHarness } from './stored-file-fixtures';

const MAX_OUTPUT = 4096;

describe('stored-file tools', function () {
  this.timeout(60_000);
  let db: TestStore;
  let harness: ToolHarness;
  let original: HostedTool;
  let asText: HostedTool;

  before(async () => {
    db = await openTestStore('embedded');
    harness = await toolHarness(testConfig({ tools: { maxOutputBytes: MAX_OUTPUT } }), db.store);
    const tools = storedFileTools(harness.deps).tools;
    original = tools.find((t) => t.type === 'svc_files_download_original')!;
    asText = tools.find((t) => t.type === 'svc_files_download_as_text')!;
  });
  after(async () => {
    await harness?.close();
    await db?.cleanup();
  });

  /** A file of u-member in acme (unless said otherwise), as an upload would store it. */
  const stored = (filename: string, content: Buffer, options: { mediaType?: string; userId?: string; orgId?: string } = {}) =>
    saveFile(db.store, {
      orgId: options.orgId ?? 'acme',
      userId: options.userId ?? 'u-member',
      filename,
      purpose: 'user_data',
      content,
      ...(options.mediaType !== undefined ? { mediaType: options.mediaType } : {}),
      now: new Date(),
    });

  const text = async (fileId: string): Promise<string> => (await asText.execute({ file_id: fileId }, harness.context())).output;

  it('are in the catalog', () => {
    const types = HOSTED_TOOL_FACTORIES.flatMap((factory) => factory(harness.deps).tools.map((t) => t.type));
    for (const type of ['svc_files_download_original', 'svc_files_download_as_text', 'svc_file_share_with_user']) assert.ok(types.includes(type), type);
  });

  describe('svc_files_download_original', () => {
    it('copies the bytes into the workspace (files/<name> by default, or the path given) and says where', async () => {
      const bytes = randomBytes(20_000);
      const file = await stored('photo.png', bytes);
      const ctx = harness.context();
      const outcome = await original.execute({ file_id: file.id }, ctx);
      assert.equal(outcome.output, `Saved photo.png (${file.id}, image/png, 20000 bytes) to files/photo.png in the workspace.`);
      assert.ok((await readFile(path.join(await ctx.workspace.ensure(), 'files/photo.png'))).equals(bytes));

      const nested = await original.execute({ file_id: file.id, path: 'in/put/copy.png' }, ctx);
      assert.match(nested.output, /to in\/put\/copy\.png in the workspace\.$/);
      assert.ok((await readFile(path.join(await ctx.workspace.ensure(), 'in/put/copy.png'))).equals(bytes));
    });

    it('refuses a path out of the workspace, and the workspace itself', async () => {
      const file = await stored('a.txt', Buffer.from('a'));
      await assert.rejects(
        original.execute({ file_id: file.id, path: '../escape.txt' }, harness.context()),
        (err: unknown) => err instanceof ToolFailure && /leaves the workspace/.test(err.message),
      );
      await assert.rejects(
        original.execute({ file_id: file.id, path: '/etc/passwd' }, harness.context()),
        (err: unknown) => err instanceof ToolFailure && /absolute/.test(err.message),
      );
      await assert.rejects(original.execute({ file_id: file.id, path: '.' }, harness.context()), /Name a file to save to/);
    });

    it("sees only the call's user's files: another user's, another organization's and unknown ids are no such file", async () => {
      const others = [
        await stored('x.txt', Buffer.from('x'), { userId: 'u-viewer' }),
        await stored('y.txt', Buffer.from('y'), { orgId: 'other', userId: 'u-member' }),
      ];
      for (const file of others) {
        for (const tool of [original, asText]) {
          await assert.rejects(
            tool.execute({ file_id: file.id }, harness.context()),
            (err: unknown) => err instanceof ToolFailure && err.message.startsWith(`No stored file with id "${file.id}"`),
          );
        }
      }
      await assert.rejects(original.execute({}, harness.context()), /file_id is required/);
      // The owner reads them in their own conversation.
      assert.match((await original.execute({ file_id: others[0]!.id }, harness.context({ userId: 'u-viewer' }))).output, /^Saved x\.txt/);
    });
  });

  describe('svc_files_download_as_text', () => {
    it('PDF: the text of every page, page by page', async () => {
      const file = await stored('report.pdf', await makePdf(['Quarterly revenue rose', 'Costs fell in March']));
      assert.equal(
        await text(file.id),
        `report.pdf (${file.id}, application/pdf, ${file.bytes} bytes) as text (2 page(s)):\n[page 1]\nQuarterly revenue rose\n\n[page 2]\nCosts fell in March`,
      );
    });

    it('PDF: recognised by its bytes whatever its name; a PDF without a text layer says so', async () => {
      const file = await stored('scan.bin', await makePdf(['', '']));
      assert.equal(
        await text(file.id),
        `scan.bin (${file.id}, application/octet-stream, ${file.bytes} bytes) as text (2 page(s) without a text layer (scanned images?)):\n`,
      );
    });

    it('DOCX: the paragraphs', async () => {
      const file = await stored('memo.docx', await makeDocx(['Dear team,', 'the offsite moves to May.']));
      const output = await text(file.id);
      assert.ok(output.startsWith(`memo.docx (${file.id}, application/vnd.openxmlformats-officedocument.wordprocessingml.document,`), output);
      assert.match(output, /as text:\nDear team,\n\nthe offsite moves to May\./);
    });

    it('HTML: the visible text, links kept, images dropped', async () => {
      const html =
        '<html><head><title>T</title></head><body><h1>Prices</h1><p>Tea is <b>3 EUR</b>.</p><img src="x.png" alt="logo"><a href="https://example.com/menu">menu</a></body></html>';
      const file = await stored('page.html', Buffer.from(html));
      const output = await text(file.id);
      assert.match(output, /PRICES\n\nTea is 3 EUR\.\n\nmenu \[https:\/\/example\.com\/menu\]$/);
      assert.doesNotMatch(output, /<|logo/);
    });

    it('JSON pretty-printed; invalid JSON shown as it is, saying so; CSV and plain text as they are', async () => {
      const json = await stored('data.json', Buffer.from('{"a":[1,2],"b":{"c":"d"}}'));
      assert.equal(
        await text(json.id),
        `data.json (${json.id}, application/json, ${json.bytes} bytes) as text:\n{\n  "a": [\n    1,\n    2\n  ],\n  "b": {\n    "c": "d"\n  }\n}`,
      );
      const broken = await stored('broken.json', Buffer.from('{"a": '));
      assert.match(await text(broken.id), /as text \(not valid JSON \(.+\); shown as it is\):\n\{"a": $/);
      const csv = await stored('t.csv', Buffer.from('name,amount\r\n"Smith, J",12\r\n'));
      assert.match(await text(csv.id), /text\/csv, \d+ bytes\) as text:\nname,amount\r\n"Smith, J",12\r\n$/);
      const plain = await stored('notes', Buffer.from('\ufeffgrüße aus Köln'), { mediaType: 'application/octet-stream' });
      assert.match(await text(plain.id), /as text:\ngrüße aus Köln$/, 'UTF-8 without a known type is text; the byte order mark is dropped');
    });

    it('refuses a file with no text, naming its type', async () => {
      const png = await stored('logo.png', Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0]), randomBytes(100)]));
      await assert.rejects(
        asText.execute({ file_id: png.id }, harness.context()),
        (err: unknown) =>
          err instanceof ToolFailure &&
          err.message ===
            `logo.png (${png.id}, image/png, ${png.bytes} bytes) is not a type text can be extracted from (PDF, DOCX, HTML, CSV, JSON or plain text); svc_files_download_original copies it into the workspace as it is.`,
      );
      const xlsx = await stored('sheet.xlsx', Buffer.concat([Buffer.from([0x50, 0x4b, 0x03, 0x04]), randomBytes(100)]));
      await assert.rejects(
        asText.execute({ file_id: xlsx.id }, harness.context()),
        /application\/vnd\.openxmlformats-officedocument\.spreadsheetml\.sheet.+is not a type text can be extracted from/,
      );
    });

    it('a damaged PDF or DOCX is a failure the model reads, not a crash', async () => {
      const pdf = await stored('bad.pdf', Buffer.from('%PDF-1.7\nthis is not a PDF body'));
      await assert.rejects(
        asText.execute({ file_id: pdf.id }, harness.context()),
        (err: unknown) => err instanceof ToolFailure && /could not be read as a PDF/.test(err.message),
      );
      const docx = await stored('bad.docx', Buffer.concat([Buffer.from([0x50, 0x4b, 0x03, 0x04]), randomBytes(64)]));
      await assert.rejects(
        asText.execute({ file_id: docx.id }, harness.context()),
        (err: unknown) => err instanceof ToolFailure && /could not be read as a DOCX document/.test(err.message),
      );
    });

    it('cuts a text longer than the output limit and saves the whole text to read on', async () => {
      const lines = Array.from({ length: 2000 }, (_, i) => `line ${i} — ünïcödé`).join('\n');
      const file = await stored('long.txt', Buffer.from(lines));
      const ctx = harness.context();
      const output = (await asText.execute({ file_id: file.id }, ctx)).output;
      assert.ok(Buffer.byteLength(output) <= MAX_OUTPUT, `${Buffer.byteLength(output)} bytes shown`);
      const match =
        /\n\[… (\d+) more bytes\. The full text \((\d+) bytes\) is saved in the workspace at (files\/file-[0-9a-f]+\.txt); read on with svc_file_read, path \3, offset (\d+)\.\]$/.exec(
          output,
        );
      assert.ok(match, output.slice(-300));
      const saved = await readFile(path.join(await ctx.workspace.ensure(), match[3]!), 'utf8');
      assert.equal(saved, lines);
      const total = Buffer.byteLength(lines);
      assert.equal(Number(match[2]), total);
      const offset = Number(match[4]);
      assert.equal(Number(match[1]), total - offset);
      const shown = output.slice(output.indexOf(':\n') + 2, match.index);
      assert.equal(Buffer.byteLength(shown), offset, 'the offset is where the shown text ends');
      assert.ok(lines.startsWith(shown), 'the shown text is the start of the text, cut between characters');
    });

    it('a stopped call stops its extraction', async () => {
      const file = await stored('r.pdf', await makePdf(['x']));
      const controller = new AbortController();
      const running = asText.execute({ file_id: file.id }, harness.context({ signal: controller.signal }));
      controller.abort(new ToolFailure('The call ran out of time.'));
      await assert.rejects(running, /The call ran out of time\./);
      const stopped = new AbortController();
      stopped.abort(new ToolFailure('stopped before it began'));
      await assert.rejects(asText.execute({ file_id: file.id }, harness.context({ signal: stopped.signal })), /stopped before it began/);
    });
  });
});
