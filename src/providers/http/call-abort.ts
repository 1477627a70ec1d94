// The abort state of one API request, cheap enough to make for every request. An AbortController costs
// an EventTarget per request (~2 µs with its listener bookkeeping) and its signals were the largest
// share of the bytes V8 promoted to the old generation under load (measured with the sampling heap
// profiler). The pass-through path only needs "tell the upstream call when the client left": the
// transport subscribes with `once`/`removeListener` (the EventEmitter shape) and reads `aborted` and
// `reason`. Code that needs a real AbortSignal (library calls, timers, fetch) asks for `.signal`, made
// on first use and aborted with it.

type AbortListener = () => void;

export class CallAbort {
  aborted = false;
  reason: unknown = undefined;
  private listeners: AbortListener[] | null = null;
  private controller: AbortController | null = null;

  /** A real AbortSignal that follows this one (made on first use). */
  get signal(): AbortSignal {
    if (this.controller === null) {
      this.controller = new AbortController();
      if (this.aborted) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }

  abort(reason: unknown = abortError()): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    const listeners = this.listeners;
    this.listeners = null;
    if (listeners) for (const listener of listeners) listener();
    this.controller?.abort(reason);
  }

  // The EventEmitter subset onAbort() subscribes with (only 'abort' is ever emitted).
  once(_event: 'abort', listener: AbortListener): this {
    if (!this.aborted) (this.listeners ??= []).push(listener);
    return this;
  }

  on(event: 'abort', listener: AbortListener): this {
    return this.once(event, listener);
  }

  removeListener(_event: 'abort', listener: AbortListener): this {
    const listeners = this.listeners;
    if (listeners) {
      const at = listeners.indexOf(listener);
      if (at >= 0) listeners.splice(at, 1);
    }
    return this;
  }

  off(event: 'abort', listener: AbortListener): this {
    return this.removeListener(event, listener);
  }
}

/** What an AbortController's abort() would give as its reason. */
function abortError(): Error {
  return new DOMException('This operation was aborted', 'AbortError');
}

/** Either kind of signal the transport accepts. */
export type CallSignal = AbortSignal | CallAbort;

/** Subscribes to either kind of signal without making an AbortSignal for a CallAbort; returns the unsubscribe. */
export function onAbort(signal: CallSignal, listener: () => void): () => void {
  if (signal instanceof CallAbort) {
    signal.once('abort', listener);
    return () => signal.removeListener('abort', listener);
  }
  signal.addEventListener('abort', listener, { once: true });
  return () => signal.removeEventListener('abort', listener);
}
