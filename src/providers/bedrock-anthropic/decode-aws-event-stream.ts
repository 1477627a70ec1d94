// The AWS event-stream binary framing (application/vnd.amazon.eventstream) used by Bedrock's
// InvokeModelWithResponseStream. Each message:
//   prelude: total length (uint32 BE) | headers length (uint32 BE) | prelude CRC32 (of the 8 bytes before)
//   headers: name length (uint8) | name | value type (uint8) | value
//   payload
//   message CRC32 (of everything before it)
// Both CRCs are verified: a corrupted frame is an upstream error, never a silently wrong reply.
import { crc32 } from 'node:zlib';
import { GatewayError } from '../../http/errors';

export type EventStreamHeaderValue = string | number | boolean | bigint | Buffer | Date;

export interface EventStreamMessage {
  headers: Record<string, EventStreamHeaderValue>;
  payload: Buffer;
}

const PRELUDE_LENGTH = 12;
const CRC_LENGTH = 4;
/** The framing allows up to 16 MiB per message; more is a broken stream, not a big event. */
const MAX_MESSAGE_LENGTH = 16 * 1024 * 1024;

function corrupt(message: string): GatewayError {
  return new GatewayError('upstream_error', `The upstream event stream is corrupted: ${message}.`);
}

function decodeHeaders(bytes: Buffer): Record<string, EventStreamHeaderValue> {
  const headers: Record<string, EventStreamHeaderValue> = {};
  let at = 0;
  const need = (n: number): void => {
    if (at + n > bytes.length) throw corrupt('a header runs past its section');
  };
  while (at < bytes.length) {
    need(1);
    const nameLength = bytes.readUInt8(at);
    at += 1;
    need(nameLength + 1);
    const name = bytes.toString('utf8', at, at + nameLength);
    at += nameLength;
    const type = bytes.readUInt8(at);
    at += 1;
    switch (type) {
      case 0:
        headers[name] = true;
        break;
      case 1:
        headers[name] = false;
        break;
      case 2:
        need(1);
        headers[name] = bytes.readInt8(at);
        at += 1;
        break;
      case 3:
        need(2);
        headers[name] = bytes.readInt16BE(at);
        at += 2;
        break;
      case 4:
        need(4);
        headers[name] = bytes.readInt32BE(at);
        at += 4;
        break;
      case 5:
        need(8);
        headers[name] = bytes.readBigInt64BE(at);
        at += 8;
        break;
      case 6:
      case 7: {
        need(2);
        const length = bytes.readUInt16BE(at);
        at += 2;
        need(length);
        headers[name] = type === 7 ? bytes.toString('utf8', at, at + length) : Buffer.from(bytes.subarray(at, at + length));
        at += length;
        break;
      }
      case 8:
        need(8);
        headers[name] = new Date(Number(bytes.readBigInt64BE(at)));
        at += 8;
        break;
      case 9:
        need(16);
        headers[name] = bytes.toString('hex', at, at + 16);
        at += 16;
        break;
      default:
        throw corrupt(`unknown header value type ${type}`);
    }
  }
  return headers;
}

/** Decodes one complete message (exactly `total length` bytes). */
export function decodeEventStreamMessage(frame: Buffer): EventStreamMessage {
  const total = frame.readUInt32BE(0);
  const headersLength = frame.readUInt32BE(4);
  if (crc32(frame.subarray(0, 8)) !== frame.readUInt32BE(8)) throw corrupt('prelude checksum mismatch');
  if (crc32(frame.subarray(0, total - CRC_LENGTH)) !== frame.readUInt32BE(total - CRC_LENGTH)) throw corrupt('message checksum mismatch');
  if (PRELUDE_LENGTH + headersLength + CRC_LENGTH > total) throw corrupt('headers longer than the message');
  const headers = decodeHeaders(frame.subarray(PRELUDE_LENGTH, PRELUDE_LENGTH + headersLength));
  return { headers, payload: frame.subarray(PRELUDE_LENGTH + headersLength, total - CRC_LENGTH) };
}

/** Byte chunks (split anywhere) → messages. A stream that stops mid-message is an error. */
export async function* decodeAwsEventStream(body: AsyncIterable<Buffer>): AsyncIterable<EventStreamMessage> {
  let pending: Buffer = Buffer.alloc(0);
  // The prelude of the message being assembled, once verified (checked as soon as its 12 bytes are in,
  // so a corrupted length fails at once instead of waiting for bytes that will never come).
  let verifiedTotal = -1;
  for await (const chunk of body) {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    while (pending.length >= PRELUDE_LENGTH) {
      if (verifiedTotal < 0) {
        if (crc32(pending.subarray(0, 8)) !== pending.readUInt32BE(8)) throw corrupt('prelude checksum mismatch');
        const total = pending.readUInt32BE(0);
        if (total < PRELUDE_LENGTH + CRC_LENGTH || total > MAX_MESSAGE_LENGTH) throw corrupt(`impossible message length ${total}`);
        verifiedTotal = total;
      }
      if (pending.length < verifiedTotal) break;
      yield decodeEventStreamMessage(pending.subarray(0, verifiedTotal));
      pending = pending.subarray(verifiedTotal);
      verifiedTotal = -1;
    }
  }
  if (pending.length > 0) throw corrupt('the stream ended inside a message');
}
