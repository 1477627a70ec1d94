// The stored-file tools through POST /v1/responses: a user uploads a DOCX with the OpenAI SDK; a model
// (a fake upstream) reads it as text, copies it into the workspace and shares it back. Each call is an
// `svc_call` item; the share link is in the share call's output, names the address the request came
// in on, passes the organization's DLP policy intact, and downloads the file with no API key.
import assert from 'node:assert/strict';
import OpenAI, { toFile } from 'openai';
import { organizationsWithDlp } from '../helpers/config';
import { TEST_KEYS } from '../helpers/gateway';
import { jsonReply, post } from '../responses/http-helpers';
import { makeDocx } from './stored-file-fixtures';
import { toolMessages, useToolGateway, type Json } from './tool-gateway';

describe('stored-file tools through POST /v1/responses', function () {
  this.timeout(90_000);
  // Every DLP detector on: the share link must pass the policy tool outputs go through unharmed.
  const bed = useToolGateway(() => ({
    config: { organizations: organizationsWithDlp({ enabled: true }), plugins: { auth: { enabled: true }, dlp: { enabled: true } } },
  }));

  it('reads an uploaded DOCX as text, copies it into the workspace and shares it back by a link in the call output', async () => {
    const docx = await makeDocx(['Minutes of the board', 'Budget approved: 42 000 EUR.']);
    const openai = new OpenAI({ apiKey: TEST_KEYS.member, baseURL: `${bed.gw.url}/v1`, maxRetries: 0 });
    const uploaded = await openai.files.create({ file: await toFile(docx, 'minutes.docx'), purpose: 'user_data' });

    bed.upstream.script((body) => {
      const done = toolMessages(body).length;
      if (done === 0) return { toolCalls: [{ id: 'call_t', name: 'svc_files_download_as_text', arguments: JSON.stringify({ file_id: uploaded.id }) }] };
      if (done === 1) return { toolCalls: [{ id: 'call_o', name: 'svc_files_download_original', arguments: JSON.stringify({ file_id: uploaded.id }) }] };
      if (done === 2) return { toolCalls: [{ id: 'call_s', name: 'svc_file_share_with_user', arguments: JSON.stringify({ path: 'files/minutes.docx' }) }] };
      return { reply: 'The budget was approved; the file is shared with you.' };
    });
    const reply = await jsonReply(
      await post(
        `${bed.gw.url}/v1/responses`,
        { model: 'fake', input: 'What does my file say? Share it back.', tools: [{ type: 'svc_tools' }] },
        { authorization: `Bearer ${TEST_KEYS.member}` },
      ),
    );
    assert.equal(reply.status, 200, reply.text);
    const output = reply.body['output'] as Json[];
    assert.deepEqual(
      output.map((item) => [item['type'], item['name'] ?? null, item['status']]),
      [
        ['svc_call', 'svc_files_download_as_text', 'completed'],
        ['svc_call', 'svc_files_download_original', 'completed'],
        ['svc_call', 'svc_file_share_with_user', 'completed'],
        ['message', null, 'completed'],
      ],
    );
    const [asText, original, shared] = output as [Json, Json, Json];
    assert.match(String(asText['output']), /as text:\nMinutes of the board\n\nBudget approved: 42 000 EUR\./);
    assert.equal(
      original['output'],
      `Saved minutes.docx (${uploaded.id}, application/vnd.openxmlformats-officedocument.wordprocessingml.document, ${docx.length} bytes) to files/minutes.docx in the workspace.`,
    );
    // The model read the extracted text on its next turn.
    assert.match(String(toolMessages(bed.upstream.calls[1]!.body)[0]?.content), /Budget approved: 42 000 EUR\./);

    const link = /^Download link: (\S+)$/m.exec(String(shared['output']))?.[1];
    assert.ok(link, String(shared['output']));
    const url = new URL(link);
    assert.equal(url.origin, bed.gw.url, 'the address the request came in on');
    const download = await fetch(link);
    assert.equal(download.status, 200);
    assert.ok(Buffer.from(await download.arrayBuffer()).equals(docx), 'the shared copy is the uploaded file, byte for byte');

    // The shared copy is a tool_output file of the user's.
    const sharedId = url.pathname.split('/')[3]!;
    const record = await openai.files.retrieve(sharedId);
    assert.equal(record.purpose, 'tool_output');
    assert.equal(record.filename, 'minutes.docx');
  });
});
