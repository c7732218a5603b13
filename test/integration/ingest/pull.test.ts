import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { parseSince } from '../../../src/cli/pull.js';
import { parseEvery } from '../../../src/cli/update.js';
import { OPENALEX_COLUMNS } from '../../../src/ingest/corpus-store.js';
import { OpenAlexClient, OpenAlexError, retryDelayMs } from '../../../src/ingest/openalex-client.js';
import { MalformedPageError, splitWorksPage } from '../../../src/ingest/openalex-page.js';
import { PULL_SELECT } from '../../../src/ingest/openalex-pull.js';
import { work } from '../../helpers/works.js';
import { startFakeOpenAlex } from './openalex-server.js';

const tricky = [
  work(1, { title: 'Braces } ] { [ and "quotes" and a back\\slash\\', updated_date: '2025-03-01T10:00:00' }),
  work(2, {
    title: 'Line\nbreak, tab\t, unicode Fe₂O₃ and \u2028',
    updated_date: '2025-05-01T00:00:00.123456',
  }),
  work(3, { title: 'ends in a backslash \\', updated_date: '2024-12-31' }),
  work(4, { title: '"updated_date": "9999-12-31"', updated_date: null }),
];

function page(
  results: unknown[],
  meta: Record<string, unknown> = { count: 4, next_cursor: 'abc' },
  space?: number,
) {
  return Buffer.from(JSON.stringify({ meta, results, group_by: [] }, null, space));
}

describe('splitWorksPage', () => {
  for (const [name, space] of [
    ['compact', undefined],
    ['pretty-printed', 2],
  ] as const) {
    it(`turns a ${name} page into one JSON line per result, the same records`, () => {
      const p = splitWorksPage(page(tricky, { count: 4, next_cursor: 'abc' }, space));
      const lines = Buffer.concat(p.lines).toString('utf8').split('\n');
      expect(lines.at(-1)).toBe('');
      expect(lines.slice(0, -1).map((l) => JSON.parse(l))).toEqual(tricky);
      expect(p.records).toBe(4);
      expect(p.nextCursor).toBe('abc');
      expect(p.count).toBe(4);
      // The newest top-level updated_date; a title quoting the key does not count.
      expect(p.maxUpdatedDate).toBe('2025-05-01T00:00:00.123456');
    });
  }

  it('finds every quote and escape wherever it falls in a 4-byte word of the page', () => {
    // Strings are skipped a word at a time: quotes, backslashes and escaped quotes at every offset
    // of every length, in a page starting at each alignment of its memory.
    const results = [];
    for (let len = 0; len < 12; len++)
      for (const tail of ['', '\\', '"', '\\"', 'é"', '}]"'])
        results.push(
          work(results.length + 1, {
            title: `${'x'.repeat(len)}${tail}${'y'.repeat(11 - len)}`,
            updated_date: `2025-01-${String(1 + (len % 28)).padStart(2, '0')}`,
          }),
        );
    const body = page(results, { count: results.length, next_cursor: null });
    for (let offset = 0; offset < 4; offset++) {
      const memory = Buffer.alloc(body.length + offset + 3, 0x22);
      body.copy(memory, offset);
      const p = splitWorksPage(memory.subarray(offset, offset + body.length));
      const lines = Buffer.concat(p.lines).toString('utf8').split('\n').slice(0, -1);
      expect(lines.map((l) => JSON.parse(l))).toEqual(results);
      expect(p.maxUpdatedDate).toBe('2025-01-12');
    }
    // A string left open at the end is a cut page at every alignment too.
    for (let cut = 1; cut < 8; cut++) {
      const open = Buffer.from(`{"meta":{},"results":[{"title":"${'z'.repeat(cut)}`);
      expect(() => splitWorksPage(open)).toThrow(MalformedPageError);
    }
  });

  it('reads the end of the list: no results, next_cursor null', () => {
    const p = splitWorksPage(page([], { count: 4, next_cursor: null }));
    expect(p).toMatchObject({ records: 0, nextCursor: null, maxUpdatedDate: '' });
    expect(p.lines).toEqual([]);
  });

  it('refuses a page cut short or without results', () => {
    const whole = page(tricky);
    expect(() => splitWorksPage(whole.subarray(0, whole.length - 40))).toThrow(MalformedPageError);
    expect(() => splitWorksPage(Buffer.from('{"error": "x"}'))).toThrow(MalformedPageError);
    expect(() => splitWorksPage(Buffer.from('<html>busy</html>'))).toThrow(MalformedPageError);
  });
});

describe('retryDelayMs', () => {
  it('honours Retry-After in seconds or as a date, else backs off exponentially up to a cap', () => {
    expect(retryDelayMs(0, '3')).toBe(3000);
    expect(retryDelayMs(4, '0')).toBe(0);
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(retryDelayMs(0, 'Thu, 01 Jan 2026 00:00:07 GMT', 1000, 60_000, now)).toBe(7000);
    expect([0, 1, 2, 3].map((a) => retryDelayMs(a, null))).toEqual([1000, 2000, 4000, 8000]);
    expect(retryDelayMs(10, null)).toBe(60_000);
    expect(retryDelayMs(1, 'soon')).toBe(2000);
  });
});

describe('PULL_SELECT', () => {
  it('selects every top-level field ingest reads, and only those', () => {
    expect(PULL_SELECT).toContain('referenced_works');
    expect(PULL_SELECT).toContain('updated_date');
    expect(PULL_SELECT).toContain('primary_location');
    expect(PULL_SELECT).not.toContain('abstract_inverted_index');
    for (const f of PULL_SELECT) expect(OPENALEX_COLUMNS).toContain(`${f}: '`);
    expect(PULL_SELECT.length).toBe(17);
  });
});

describe('OpenAlexClient', () => {
  const query = { filter: 'from_updated_date:2020-01-01', select: PULL_SELECT, cursor: '*', perPage: 200 };
  const works = [work(1), work(2)];

  it('waits as long as a 429 Retry-After asks, then reads the page', async () => {
    const server = await startFakeOpenAlex(works);
    server.fault = (_req, res, n) => {
      if (n > 1) return false;
      res.writeHead(429, { 'retry-after': '3', 'content-type': 'application/json' });
      res.end('{"error": "Too many requests"}');
      return true;
    };
    const slept: number[] = [];
    const client = new OpenAlexClient({ baseUrl: server.url, sleep: async (ms) => void slept.push(ms) });
    try {
      const p = await client.worksPage(query);
      expect(p.records).toBe(2);
      expect(slept).toEqual([3000]);
      expect(server.requests.map((r) => r.cursor)).toEqual(['*', '*']);
    } finally {
      client.close();
      await server.close();
    }
  });

  it('retries 5xx and cut-off answers with growing delays, and gives up after the retries', async () => {
    const server = await startFakeOpenAlex(works);
    server.fault = (_req, res, n) => {
      if (n === 1)
        res.socket?.destroy(); // connection dropped
      else if (n === 2) {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '5000' });
        res.write('{"meta": {"count": 2}, "results": [{"id": "https://openalex.org/W1"');
        res.socket?.destroy(); // page cut short
      } else {
        res.writeHead(503, { 'content-type': 'application/json' });
        res.end('{"error": "Service Unavailable", "message": "try later"}');
      }
      return true;
    };
    const slept: number[] = [];
    const client = new OpenAlexClient({
      baseUrl: server.url,
      retries: 3,
      sleep: async (ms) => void slept.push(ms),
    });
    try {
      const error = await client.worksPage(query).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OpenAlexError);
      expect((error as Error).message).toMatch(
        /failed 4 time\(s\) in a row .*503 Service Unavailable: try later/,
      );
      expect(slept).toEqual([1000, 2000, 4000]);
      expect(server.requests.length).toBe(4);
    } finally {
      client.close();
      await server.close();
    }
  });

  it('names the URL an API that redirects wants, instead of following it', async () => {
    const server = await startFakeOpenAlex(works);
    server.fault = (_req, res) => {
      res.writeHead(301, { location: 'https://api.example.org/works?per_page=200' });
      res.end();
      return true;
    };
    const client = new OpenAlexClient({ baseUrl: server.url, sleep: async () => {} });
    try {
      await expect(client.worksPage(query)).rejects.toThrow(
        /redirects to https:\/\/api\.example\.org: set OPENALEX_API_URL to it/,
      );
    } finally {
      client.close();
      await server.close();
    }
  });

  it('fails at once, without retrying, on a refused key, a bad filter, or a server it cannot reach', async () => {
    const server = await startFakeOpenAlex(works, { apiKey: 'right' });
    const slept: number[] = [];
    const sleep = async (ms: number) => void slept.push(ms);
    const wrongKey = new OpenAlexClient({ baseUrl: server.url, apiKey: 'wrong', sleep });
    const badFilter = new OpenAlexClient({ baseUrl: server.url, apiKey: 'right', sleep });
    const closed = await new Promise<number>((resolve) => {
      const s = createServer();
      s.listen(0, '127.0.0.1', () => {
        const port = (s.address() as { port: number }).port;
        s.close(() => resolve(port));
      });
    });
    const nowhere = new OpenAlexClient({ baseUrl: `http://127.0.0.1:${closed}`, sleep });
    try {
      await expect(wrongKey.worksPage(query)).rejects.toThrow(
        /refused the API key \(401 Unauthorized.*OPENALEX_API_KEY/,
      );
      await expect(badFilter.worksPage({ ...query, filter: `${query.filter},colour:blue` })).rejects.toThrow(
        /refused the request \(400 Bad Request: colour is not a valid field/,
      );
      await expect(nowhere.worksPage(query)).rejects.toThrow(/cannot reach the OpenAlex API .*ECONNREFUSED/);
      expect(slept).toEqual([]);
      expect(server.requests.map((r) => r.apiKey)).toEqual(['wrong', 'right']);
    } finally {
      for (const c of [wrongKey, badFilter, nowhere]) c.close();
      await server.close();
    }
  });
});

describe('pull and update options', () => {
  it('takes --since as a date or a date-time that exists, and --every as a duration with a unit', () => {
    for (const ok of [
      '2025-02-28',
      '2024-02-29',
      '2025-11-06T05:14',
      '2025-11-06T05:14:23.482839',
      '2025-01-01T00:00:00Z',
    ])
      expect(parseSince(ok)).toBe(ok);
    for (const bad of ['2025-02-29', '2025-13-01', '25-01-01', '2025-01-01T24:00', 'yesterday', ''])
      expect(() => parseSince(bad)).toThrow(/--since must be/);
    expect(parseEvery('90s')).toBe(90_000);
    expect(parseEvery('30m')).toBe(1_800_000);
    expect(parseEvery('6h')).toBe(21_600_000);
    expect(parseEvery('1d')).toBe(86_400_000);
    for (const bad of ['5x', '10', '0s', '100d', '-1h'])
      expect(() => parseEvery(bad)).toThrow(/--every must be/);
  });
});
