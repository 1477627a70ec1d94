import assert from 'node:assert/strict';
import { CallAbort } from '../../src/providers/http/call-abort';

describe('CallAbort (a request abort without an EventTarget)', () => {
  it('calls each listener once on abort, not the removed ones, and keeps the reason', () => {
    const abort = new CallAbort();
    const calls: string[] = [];
    const removed = (): void => void calls.push('removed');
    abort.once('abort', () => calls.push('a'));
    abort.once('abort', removed);
    abort.on('abort', () => calls.push('b'));
    abort.removeListener('abort', removed);
    assert.equal(abort.aborted, false);
    const reason = new Error('client gone');
    abort.abort(reason);
    abort.abort(new Error('second'));
    assert.deepEqual(calls, ['a', 'b']);
    assert.equal(abort.aborted, true);
    assert.equal(abort.reason, reason);
    abort.once('abort', () => calls.push('late'));
    assert.deepEqual(calls, ['a', 'b'], 'a listener added after the abort is not kept');
  });

  it('gives an AbortError as the default reason, like AbortController', () => {
    const abort = new CallAbort();
    abort.abort();
    assert.equal((abort.reason as Error).name, 'AbortError');
  });

  it('makes its AbortSignal on first use, aborted with it before and after', () => {
    const before = new CallAbort();
    const signal = before.signal;
    assert.equal(before.signal, signal, 'one signal per abort');
    assert.equal(signal.aborted, false);
    let fired = 0;
    signal.addEventListener('abort', () => fired++);
    before.abort('bye');
    assert.equal(signal.aborted, true);
    assert.equal(signal.reason, 'bye');
    assert.equal(fired, 1);

    const after = new CallAbort();
    after.abort('late');
    assert.equal(after.signal.aborted, true);
    assert.equal(after.signal.reason, 'late');
  });
});
