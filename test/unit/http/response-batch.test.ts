import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { FastPathContext, fastPath, ResponseBatch } from '../../../src/http/fast-path/fast-path.js';
import { FastPathResponse } from '../../../src/http/fast-path/handoff.js';

/** What a Node response was told, in order, across every response of a test. */
type Call = [id: string, what: 'head' | 'end', detail: unknown];

function fakeResponse(id: string, calls: Call[], failFirstHead = false): ServerResponse {
  let failing = failFirstHead;
  const res = {
    headersSent: false,
    hasHeader: () => false,
    writeHead(status: number, headers: Record<string, string>) {
      if (failing) {
        failing = false;
        throw new Error('the socket went away');
      }
      res.headersSent = true;
      calls.push([id, 'head', { status, length: headers['Content-Length'] }]);
    },
    end(body?: string | Uint8Array) {
      calls.push([id, 'end', body === undefined ? null : Buffer.from(body).toString()]);
    },
  };
  return res as unknown as ServerResponse;
}

function context(res: ServerResponse): FastPathContext {
  const incoming = { headers: {}, rawHeaders: [] } as unknown as IncomingMessage;
  return new FastPathContext(incoming, res, 'http://localhost/v1/elements/Fe');
}

const answer = (text: string) =>
  new FastPathResponse(200, { 'content-type': 'text/plain' }, Buffer.from(text));

describe('ResponseBatch: the fast path writes a turn of the event loop’s answers together', () => {
  afterEach(() => vi.restoreAllMocks());

  it('holds the answers made in a turn until it ends, then writes them all, in the order they were made', () => {
    const turns: (() => void)[] = [];
    const batch = new ResponseBatch((flush) => turns.push(flush));
    const calls: Call[] = [];
    for (const id of ['a', 'b', 'c']) batch.add(context(fakeResponse(id, calls)), answer(`body ${id}`));
    expect(calls).toEqual([]);
    expect(turns).toHaveLength(1);
    turns[0]!();
    expect(calls).toEqual([
      ['a', 'head', { status: 200, length: '6' }],
      ['a', 'end', 'body a'],
      ['b', 'head', { status: 200, length: '6' }],
      ['b', 'end', 'body b'],
      ['c', 'head', { status: 200, length: '6' }],
      ['c', 'end', 'body c'],
    ]);
    // The next turn's answers are a batch of their own.
    batch.add(context(fakeResponse('d', calls)), answer('body d'));
    expect(turns).toHaveLength(2);
    turns[1]!();
    expect(calls.slice(6).map(([id, what]) => `${id} ${what}`)).toEqual(['d head', 'd end']);
  });

  it('answers one that cannot be written with the 500 problem, and still writes the others', () => {
    vi.spyOn(console, 'error').mockImplementation(() => {});
    let flush = () => {};
    const batch = new ResponseBatch((f) => {
      flush = f;
    });
    const calls: Call[] = [];
    batch.add(context(fakeResponse('a', calls, true)), answer('body a'));
    batch.add(context(fakeResponse('b', calls)), answer('body b'));
    flush();
    expect(calls[0]).toEqual(['a', 'head', { status: 500, length: undefined }]);
    expect(JSON.parse(String(calls[1]![2]))).toMatchObject({ code: 'internal_error', status: 500 });
    expect(calls.slice(2)).toEqual([
      ['b', 'head', { status: 200, length: '6' }],
      ['b', 'end', 'body b'],
    ]);
    expect(console.error).toHaveBeenCalledWith(expect.objectContaining({ message: 'the socket went away' }));
  });

  // The manager sets a damaged snapshot aside in its own callback, which may come between the
  // reading of a request and the end of its turn: the answer made from that snapshot is not sent.
  it('writes a 503 data_unavailable for an answer whose snapshot was set aside before the turn ended', () => {
    let flush = () => {};
    const batch = new ResponseBatch((f) => {
      flush = f;
    });
    const calls: Call[] = [];
    const snapshot = { version: '0123456789abcdef', isSetAside: false };
    const damaged = context(fakeResponse('a', calls));
    damaged.set('snapshot', snapshot);
    batch.add(damaged, answer('body a'));
    const sound = context(fakeResponse('b', calls));
    sound.set('snapshot', { version: 'fedcba9876543210', isSetAside: false });
    batch.add(sound, answer('body b'));
    snapshot.isSetAside = true;
    flush();
    expect(calls[0]).toEqual(['a', 'head', { status: 503, length: undefined }]);
    expect(JSON.parse(String(calls[1]![2]))).toMatchObject({
      code: 'data_unavailable',
      status: 503,
      data_version: '0123456789abcdef',
    });
    expect(calls.slice(2)).toEqual([
      ['b', 'head', { status: 200, length: '6' }],
      ['b', 'end', 'body b'],
    ]);
  });

  it('by default writes at the end of the turn (setImmediate), not at once', async () => {
    const batch = new ResponseBatch();
    const calls: Call[] = [];
    batch.add(context(fakeResponse('a', calls)), answer('body a'));
    await Promise.resolve();
    expect(calls).toEqual([]);
    await new Promise((done) => setImmediate(done));
    expect(calls.map(([id, what]) => `${id} ${what}`)).toEqual(['a head', 'a end']);
  });

  it('writes the answers held before a request is handed on to Hono, and never twice', () => {
    const turns: (() => void)[] = [];
    const batch = new ResponseBatch((flush) => turns.push(flush));
    const calls: Call[] = [];
    const honoSaw: string[][] = [];
    const listener = fastPath(
      (c) => ((c as FastPathContext).req.path === '/v1/elements/Fe' ? answer('cached Fe') : null),
      () => honoSaw.push(calls.map(([id, what]) => `${id} ${what}`)),
      batch,
    );
    const incoming = (path: string) =>
      ({
        method: 'GET',
        url: path,
        headers: { host: 'localhost' },
        rawHeaders: ['Host', 'localhost'],
        socket: {},
      }) as unknown as IncomingMessage;
    listener(incoming('/v1/elements/Fe'), fakeResponse('hit', calls));
    expect(calls).toEqual([]);
    listener(incoming('/v1/elements/Xx'), fakeResponse('miss', calls));
    expect(honoSaw).toEqual([['hit head', 'hit end']]);
    turns[0]!();
    expect(calls).toHaveLength(2);
  });
});
