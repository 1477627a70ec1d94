import assert from 'node:assert/strict';
import { peekUsage, UsageTail } from '../../src/formats/chat/peek-usage';
import { replaceModelBytes } from '../../src/model-call/replace-model-bytes';
import { parseSse, type SseEvent } from '../../src/providers/http/sse-parser';
import { EventAligner } from '../../src/operations/gateway/event-aligner';
import { chatStreamEvents } from '../fixtures/upstreams/openai-upstream';

async function collect(parts: (string | Buffer)[]): Promise<SseEvent[]> {
  async function* chunks(): AsyncIterable<Buffer> {
    for (const part of parts) yield typeof part === 'string' ? Buffer.from(part) : part;
  }
  const out: SseEvent[] = [];
  for await (const event of parseSse(chunks())) out.push(event);
  return out;
}

describe('SSE parser', () => {
  it('joins lines split across chunks, CRLF split between chunks, comments and multi-line data', async () => {
    const events = await collect([': ping\r', '\nevent: message_start\r\nda', 'ta: {"a":', '1}\r', '\n\r\ndata: line1\ndata: line2\n\n']);
    assert.deepEqual(events, [
      { event: 'message_start', data: '{"a":1}', id: undefined },
      { event: undefined, data: 'line1\nline2', id: undefined },
    ]);
  });

  it('decodes a UTF-8 character split between chunks and keeps ids', async () => {
    const bytes = Buffer.from('id: 7\ndata: héllo ✓\n\n');
    const cut = bytes.indexOf(0xc3) + 1; // inside the two-byte é
    const events = await collect([bytes.subarray(0, cut), bytes.subarray(cut)]);
    assert.deepEqual(events, [{ event: undefined, data: 'héllo ✓', id: '7' }]);
  });

  it('yields a last event that lacks its final blank line, and ignores events without data', async () => {
    const events = await collect(['event: ping\n\n', 'data: [DONE]']);
    assert.deepEqual(events, [{ event: undefined, data: '[DONE]', id: undefined }]);
  });

  it('parses one byte at a time', async () => {
    const text = chatStreamEvents('m', ['x', 'y']).join('');
    const events = await collect([...Buffer.from(text)].map((b) => Buffer.from([b])));
    assert.equal(events.length, 6);
    assert.equal(events.at(-1)?.data, '[DONE]');
  });
});

describe('model name replacement in raw bytes', () => {
  it('replaces only the top-level model value and leaves every other byte', () => {
    const raw = Buffer.from('{"model" : "alias","messages":[{"role":"user","content":"say \\"model\\": \\"alias\\""}],"x_unknown":{"a":[1,2.50]}}');
    const out = replaceModelBytes(raw, 'alias', 'gpt-4o-2024');
    assert.equal(out?.toString(), raw.toString().replace('"model" : "alias"', '"model" : "gpt-4o-2024"'));
  });

  it('returns null when the value is ambiguous or absent', () => {
    assert.equal(replaceModelBytes(Buffer.from('{"model":"a","metadata":{"model":"a"}}'), 'a', 'b'), null);
    assert.equal(replaceModelBytes(Buffer.from('{"model":"\\u0061"}'), 'a', 'b'), null);
  });
});

describe('usage peeking', () => {
  it('reads usage from a completion body and from a stream tail with usage:null chunks', () => {
    assert.deepEqual(peekUsage(Buffer.from('{"id":"x","usage":{"prompt_tokens":11,"completion_tokens":4,"prompt_tokens_details":{"cached_tokens":0}}}')), {
      promptTokens: 11,
      completionTokens: 4,
      cachedPromptTokens: 0,
    });
    const tail = new UsageTail();
    const text = chatStreamEvents('m', ['a'], { prompt_tokens: 9, completion_tokens: 2, total_tokens: 11 })
      .join('')
      .replace(/"choices":\[\{"index":0,"delta":\{"content"/, '"usage":null,"choices":[{"index":0,"delta":{"content"');
    const bytes = Buffer.from(text);
    for (let i = 0; i < bytes.length; i += 17) tail.push(bytes.subarray(i, i + 17));
    assert.deepEqual(tail.usage(), { promptTokens: 9, completionTokens: 2, cachedPromptTokens: 0 });
  });

  it('returns null when no usage was sent', () => {
    const tail = new UsageTail();
    for (const event of chatStreamEvents('m', ['a'], null)) tail.push(Buffer.from(event));
    assert.equal(tail.usage(), null);
  });
});

describe('event aligner', () => {
  it('relays whole events only, holding a split tail until it completes', () => {
    const aligner = new EventAligner();
    assert.equal(aligner.push(Buffer.from('data: 1\n\ndata: 2')).toString(), 'data: 1\n\n');
    assert.equal(aligner.push(Buffer.from('2\n')).toString(), '');
    assert.equal(aligner.push(Buffer.from('\ndata: 3\n\n')).toString(), 'data: 22\n\ndata: 3\n\n');
    assert.equal(aligner.rest(), null);
  });
});
