// Live events across processes over Redis pub/sub (queue.driver bullmq; live-events.ts says why). The
// writer's events go out at once: those published within one turn of the event loop travel together,
// one PUBLISH per response (a token stream produces many small events per turn). A process holds one
// subscriber connection and subscribes to the channel of a response only while it has a reader of it.
// Pub/sub delivers at most once; the reader's periodic store read covers a message lost to a reconnect.
import type { Redis } from 'ioredis';
import type { Logger } from 'winston';
import type { RedisProvider } from '../queue/redis';
import { LocalReaders, SAFETY_POLL_MS, newOrigin, throttledReporter, type LiveEvents } from './live-events';
import type { StreamEvent } from './stream-event';

export interface RedisLiveEventsOptions {
  /** The process's shared Redis connection: publishes go on it. */
  redis: RedisProvider;
  /** queue.prefix: channels are `<prefix>:response-events:<responseId>`. */
  prefix: string;
  logger: Logger;
  storePollMs?: number;
}

/** On the wire: who published (a process ignores its own: its readers had the events already) and the events. */
interface WireMessage {
  o: string;
  e: [number, string, Record<string, unknown>][];
}

interface Channel {
  readers: number;
  /** Resolves once Redis confirmed the SUBSCRIBE. */
  ready: Promise<void>;
}

export function createRedisLiveEvents(options: RedisLiveEventsOptions): LiveEvents {
  const local = new LocalReaders();
  const origin = newOrigin();
  const channelPrefix = `${options.prefix}:response-events:`;
  const outgoing = new Map<string, StreamEvent[]>();
  let sendScheduled = false;
  let subscriber: Redis | null = null;
  const channels = new Map<string, Channel>();
  let closed = false;
  const report = throttledReporter(options.logger);

  const send = (): void => {
    sendScheduled = false;
    if (outgoing.size === 0) return;
    const publisher = options.redis.get();
    for (const [responseId, events] of outgoing) {
      // A WireMessage, written around each event's JSON text where the writer has it (not serialized again).
      const items = events.map((e) => `[${e.sequenceNumber},${JSON.stringify(e.event)},${e.json ?? JSON.stringify(e.data)}]`);
      const message = `{"o":${JSON.stringify(origin)},"e":[${items.join(',')}]}`;
      publisher.publish(channelPrefix + responseId, message).catch((err: unknown) => report('live events: publish failed', err));
    }
    outgoing.clear();
  };

  const onMessage = (channel: string, text: string): void => {
    if (!channel.startsWith(channelPrefix)) return;
    let message: WireMessage;
    try {
      message = JSON.parse(text) as WireMessage;
    } catch {
      return;
    }
    if (message.o === origin || !Array.isArray(message.e)) return;
    const responseId = channel.slice(channelPrefix.length);
    for (const [sequenceNumber, event, data] of message.e) local.deliver(responseId, { sequenceNumber, event, data });
  };

  const subscriberConnection = (): Redis => {
    if (!subscriber) {
      // A connection in subscriber mode takes no other command: one of its own, beside the shared one.
      subscriber = options.redis.get().duplicate();
      subscriber.on('error', (err: Error) => report('live events: subscriber connection error', err));
      subscriber.on('message', onMessage);
    }
    return subscriber;
  };

  return {
    mechanism: 'redis',
    storePollMs: options.storePollMs ?? SAFETY_POLL_MS,
    publish(responseId, event) {
      local.deliver(responseId, event);
      if (closed) return;
      const queued = outgoing.get(responseId);
      if (queued) queued.push(event);
      else outgoing.set(responseId, [event]);
      if (!sendScheduled) {
        sendScheduled = true;
        setImmediate(send);
      }
    },
    async subscribe(responseId, reader) {
      const remove = local.add(responseId, reader);
      const name = channelPrefix + responseId;
      let channel = channels.get(name);
      if (!channel) {
        const connection = subscriberConnection();
        channel = { readers: 0, ready: connection.subscribe(name).then(() => undefined) };
        channels.set(name, channel);
      }
      channel.readers++;
      let released = false;
      const release = (): void => {
        if (released) return;
        released = true;
        remove();
        const current = channels.get(name);
        if (!current || --current.readers > 0) return;
        channels.delete(name);
        subscriber?.unsubscribe(name).catch((err: unknown) => report('live events: unsubscribe failed', err));
      };
      try {
        await channel.ready;
      } catch (err) {
        release();
        throw err;
      }
      return { close: release };
    },
    stored() {
      // Events travel themselves; nothing to announce.
    },
    async close() {
      closed = true;
      if (sendScheduled) send();
      const connection = subscriber;
      subscriber = null;
      channels.clear();
      if (connection) await connection.quit().catch(() => connection.disconnect());
    },
  };
}
