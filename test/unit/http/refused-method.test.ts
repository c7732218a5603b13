import type { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { refusedMethod } from '../../../src/http/refused-method.js';

/** What Node gives the clientError listener: the error (its last bytes read, how far they were parsed) and the socket. */
function refused(
  bytes: string | null,
  socket: { bytesRead: number; incoming?: { method: string; complete: boolean } | null },
  bytesParsed = bytes?.length,
): string | null {
  const error = Object.assign(new Error('refused'), {
    ...(bytes === null ? {} : { rawPacket: Buffer.from(bytes, 'latin1'), bytesParsed }),
  });
  const fake = { bytesRead: socket.bytesRead, parser: { incoming: socket.incoming ?? null } };
  return refusedMethod(error, fake as unknown as Socket);
}

const big = `X-Big: ${'a'.repeat(100)}`;

describe('the method of a request Node refused', () => {
  it("is the parser's incoming request when its head was read and its body was not", () => {
    expect(refused(null, { bytesRead: 50, incoming: { method: 'HEAD', complete: false } })).toBe('HEAD');
    expect(refused('zz\r\n', { bytesRead: 60, incoming: { method: 'HEAD', complete: false } })).toBe('HEAD');
  });

  it("is the first token of the connection's first bytes, whatever it is", () => {
    const head = `HEAD / HTTP/1.1\r\nHost: x\r\n${big}`;
    expect(refused(head, { bytesRead: head.length })).toBe('HEAD');
    expect(refused('NOT HTTP AT ALL\r\n\r\n', { bytesRead: 19 }, 3)).toBe('NOT');
    // A request that ended before another began, in the same bytes (pipelined): the refused one is the second.
    const two = `GET / HTTP/1.1\r\nHost: x\r\n\r\nHEAD / HTTP/1.1\r\n${big}`;
    expect(refused(two, { bytesRead: two.length, incoming: { method: 'GET', complete: true } })).toBeNull();
  });

  it('is the request line of later bytes only when they begin with one', () => {
    const head = `HEAD /v1/elements HTTP/1.1\r\nHost: x\r\n${big}`;
    expect(refused(head, { bytesRead: head.length + 40 })).toBe('HEAD');
    // The rest of a head sent in pieces: its request line came earlier.
    expect(refused(`${big}\r\n\r\n`, { bytesRead: 5_000 })).toBeNull();
    expect(refused(`aaaa aaaa\r\n${big}`, { bytesRead: 5_000 })).toBeNull();
  });

  it('is not known for a head whose time ran out (no bytes kept)', () => {
    expect(refused(null, { bytesRead: 30 })).toBeNull();
  });
});
