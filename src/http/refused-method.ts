import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';

/**
 * The method of a request Node refused before the app saw it (clientError: headers too large,
 * a malformed request, a timeout), when it can be told; null when it cannot. The answer to a HEAD
 * carries no body (RFC 9110 9.3.2), and Node hands over no method with the error, so:
 * - a request whose head was read but whose body was not (a timeout in it, a bad chunk) is
 *   Node's parser's incoming message, with its method;
 * - otherwise the refused head is in the bytes Node read last (`rawPacket`) only when they begin
 *   with it: they are the connection's first bytes, or they begin with a request line and no
 *   earlier message ended in them (pipelined requests);
 * - a head still arriving when its time ran out, or sent in pieces, keeps no bytes: null.
 * Wrong only for a client whose own bytes mislead it (a header value cut where a request line seems
 * to begin), which then gets a body to its HEAD; never for any other client.
 */
export function refusedMethod(error: Error, socket: Socket): string | null {
  const incoming = (socket as Socket & { parser?: { incoming?: IncomingMessage | null } }).parser?.incoming;
  if (incoming && !incoming.complete) return incoming.method ?? null;
  const { rawPacket: raw, bytesParsed } = error as { rawPacket?: unknown; bytesParsed?: unknown };
  if (!Buffer.isBuffer(raw) || raw.length === 0) return null;
  const text = raw.toString('latin1');
  // A message ended in these bytes before the fault: the refused one began after it, somewhere.
  if (MESSAGE_END.test(typeof bytesParsed === 'number' ? text.slice(0, bytesParsed) : text)) return null;
  // The first bytes of the connection begin its first request, whatever they are (a method the
  // parser refused too); later ones must look like a request line.
  const first = socket.bytesRead === raw.length;
  return (first ? FIRST_TOKEN : REQUEST_LINE).exec(text)?.[1] ?? null;
}

const MESSAGE_END = /\r?\n\r?\n/;
const TOKEN = "[!#$%&'*+.^_`|~0-9A-Za-z-]+";
const FIRST_TOKEN = new RegExp(`^(${TOKEN}) `);
const REQUEST_LINE = new RegExp(`^(${TOKEN}) [^\\s]+ HTTP/\\d\\.\\d\\r?\\n`);
