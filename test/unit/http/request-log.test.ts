import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { type RequestLine, requestLineWriter } from '../../../src/http/request-log.js';

/** A pino logger whose lines are kept, with the clock stopped (pino reads Date.now for time). */
function keptLogger(bindings?: Record<string, unknown>) {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  const base = pino({ level: 'info' }, stream);
  return { logger: bindings ? base.child(bindings) : base, lines };
}

const LINES: RequestLine[] = [
  {
    req_id: '7587f0b0-9dc1-4033-9611-93de0127ac11',
    method: 'GET',
    route: '/v1/elements/:symbol',
    path: '/v1/elements/Fe',
    status: 200,
    ms: 0.4,
    key_prefix: null,
  },
  // Characters JSON must escape, a key's prefix, a request id the client gave.
  {
    req_id: 'client "id" \\ \u0001',
    method: 'POST',
    route: 'unmatched',
    path: '/v1/subjects/search"\u2028é',
    status: 404,
    ms: 12.3,
    key_prefix: 'ri_live_ab12',
  },
  { req_id: undefined, method: 'GET', route: '/mcp', path: '/mcp', status: 500, ms: 0, key_prefix: null },
];

describe('the request log line', () => {
  it.each([undefined, { svc: 'ri', replica: 2 }])(
    "is written as pino writes logger.info(fields, 'request'), byte for byte (bindings %o)",
    (bindings) => {
      const now = Date.now;
      Date.now = () => 1_795_791_688_123;
      try {
        const ours = keptLogger(bindings);
        const pinos = keptLogger(bindings);
        const write = requestLineWriter(ours.logger);
        for (const line of LINES) {
          write(line);
          pinos.logger.info(line, 'request');
        }
        expect(ours.lines).toHaveLength(LINES.length);
        expect(ours.lines).toEqual(pinos.lines);
        expect(JSON.parse(ours.lines[1]!)).toMatchObject({ ...LINES[1], msg: 'request', level: 30 });
      } finally {
        Date.now = now;
      }
    },
  );
});
