import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUNDLED_SAMPLE } from '../../../src/config/paths.js';
import { openCorpusStore } from '../../../src/ingest/corpus-store.js';
import { MAIN, ri, riAsync as riAsyncBase, stop, until } from '../../helpers/cli.js';
import { tempDir, work } from '../../helpers/works.js';
import {
  decodeCursor,
  type FakeOpenAlex,
  sampleWorks,
  startFakeOpenAlex,
  type Work,
} from './openalex-server.js';

/** `ri` without blocking, with no OpenAlex key from the environment. */
const riAsync = (args: string[], env: Record<string, string> = {}) =>
  riAsyncBase(args, { OPENALEX_API_KEY: '', ...env });

function state(dataDir: string) {
  return JSON.parse(readFileSync(join(dataDir, 'pull/state.json'), 'utf8')) as {
    cursor: string | null;
    since: string;
    next_since: string | null;
    pages: number;
  };
}

const readCount = (stderr: string) => Number(/pull: \d+ page\(s\) in [\d.]+ s: (\d+) read/.exec(stderr)?.[1]);

/** One line on stderr, no stack trace. */
function expectOneLine(stderr: string) {
  expect(stderr.trim().split('\n')).toHaveLength(1);
  expect(stderr).not.toMatch(/\n\s+at /);
}

describe('ri pull against a local OpenAlex API serving the bundled sample', () => {
  const works = sampleWorks();
  const root = tempDir('ri-pull-');
  let api: FakeOpenAlex;
  let env: Record<string, string>;
  let ingestedVersion = '';

  beforeAll(async () => {
    api = await startFakeOpenAlex(works, { apiKey: 'test-key' });
    env = { OPENALEX_API_URL: api.url, OPENALEX_API_KEY: 'test-key' };
    const data = join(root, 'ingested');
    const ingested = ri(['ingest', ...BUNDLED_SAMPLE.works, '--data-dir', data]);
    expect(ingested.status, ingested.stderr).toBe(0);
    const built = ri(['build', '--data-dir', data]);
    expect(built.status, built.stderr).toBe(0);
    ingestedVersion = built.stdout.trim();
  });
  afterAll(async () => {
    await api.close();
  });

  it('gives the same data_version after ri build as ingesting the same records from a file', async () => {
    const data = join(root, 'pulled');
    const r = await riAsync(['pull', '--since', '2000-01-01', '--data-dir', data], env);
    expect(r.status, r.stderr).toBe(0);
    expect(readCount(r.stderr)).toBe(works.length);
    expect(r.stderr).toMatch(
      /\d+ kept, 0 replaced, \d+ unchanged, 0 removed, \d+ skipped \(retracted \d+, paratext \d+/,
    );
    // The request a pull sends: filter, select of the fields ingest reads, 200 a page, the key.
    expect(api.requests[0]).toMatchObject({
      cursor: '*',
      filter: 'from_updated_date:2000-01-01',
      perPage: 200,
      apiKey: 'test-key',
    });
    expect(api.requests[0]!.select!.split(',')).toContain('referenced_works');
    expect(api.requests.length).toBe(Math.ceil(works.length / 200) + 1);
    const newest = works
      .map((w) => (w.updated_date as string | undefined) ?? '')
      .sort()
      .at(-1);
    expect(state(data)).toMatchObject({ cursor: null, next_since: newest });
    // The tag step ran after the merge, as after ri ingest: no title is left for the build to tag.
    const store = await openCorpusStore(join(data, 'corpus.duckdb'));
    try {
      expect(await store.countUntagged()).toBe(0);
    } finally {
      store.close();
    }

    const built = ri(['build', '--data-dir', data]);
    expect(built.status, built.stderr).toBe(0);
    expect(built.stdout.trim()).toBe(ingestedVersion);
  }, 120_000);

  it('resumes a pull the API broke off from the stored cursor: nothing lost, nothing read twice', async () => {
    const data = join(root, 'broken');
    const breakAt = 8_000; // the 41st page
    let broken = true;
    api.requests = [];
    api.fault = (req, res) => {
      if (!broken || (decodeCursor(req.cursor) ?? 0) < breakAt) return false;
      res.writeHead(503, { 'content-type': 'application/json' });
      res.end('{"error": "Service Unavailable"}');
      return true;
    };
    const first = await riAsync(
      ['pull', '--since', '2000-01-01', '--retries', '1', '--pages-per-batch', '10', '--data-dir', data],
      env,
    );
    expect(first.status).toBe(1);
    const last = first.stderr.trim().split('\n').at(-1)!;
    expect(last).toMatch(/^ri: pull: the OpenAlex API failed 2 time\(s\) in a row .*503 Service Unavailable/);
    expect(last).toMatch(/`ri pull` goes on from the last page read/);
    expect(first.stderr).not.toMatch(/\n\s+at /);
    expect(readCount(first.stderr)).toBe(breakAt);
    const stored = state(data);
    expect(stored.cursor).not.toBeNull();
    expect(decodeCursor(stored.cursor!)).toBe(breakAt);

    broken = false;
    api.requests = [];
    const second = await riAsync(['pull', '--data-dir', data], env);
    expect(second.status, second.stderr).toBe(0);
    expect(second.stderr).toMatch(
      /resuming the interrupted pull of works updated since 2000-01-01 after 40 page/,
    );
    expect(api.requests[0]!.cursor).toBe(stored.cursor);
    expect(api.requests[0]!.filter).toBe('from_updated_date:2000-01-01');
    expect(readCount(second.stderr)).toBe(works.length - breakAt);
    expect(state(data).cursor).toBeNull();

    const built = ri(['build', '--data-dir', data]);
    expect(built.status, built.stderr).toBe(0);
    expect(built.stdout.trim()).toBe(ingestedVersion);
  }, 120_000);

  it('stops on Ctrl-C (SIGINT) keeping the pages read, and goes on from there', async () => {
    const data = join(root, 'interrupted');
    api.requests = [];
    api.delayMs = 20;
    const child = spawn(process.execPath, [MAIN, 'pull', '--since', '2000-01-01', '--data-dir', data], {
      env: { ...process.env, ...env, LOG_LEVEL: 'silent' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      await until(() => (api.requests.length >= 20 ? true : undefined), 60_000);
      child.kill('SIGINT');
      expect(await exited).toBe(130);
    } finally {
      api.delayMs = 0;
    }
    expect(stderr.trim().split('\n').at(-1)).toMatch(
      /^ri: pull: interrupted; `ri pull` goes on from the last page read$/,
    );
    const first = readCount(stderr);
    expect(first).toBeGreaterThan(0);
    expect(decodeCursor(state(data).cursor!)).toBe(first);

    const rest = await riAsync(['pull', '--data-dir', data], env);
    expect(rest.status, rest.stderr).toBe(0);
    expect(first + readCount(rest.stderr)).toBe(works.length);
  }, 120_000);

  it('next pull starts where the last ended, waits out a 429, and replaces a record updated since', async () => {
    const data = join(root, 'pulled');
    const before = state(data).next_since!;
    const target = works.find((w) => typeof w.updated_date === 'string' && (w.cited_by_count as number) > 0)!;
    const id = Number(String(target.id).replace('https://openalex.org/W', ''));
    const newer: Work = { ...target, cited_by_count: 12_345, updated_date: '2026-06-01T00:00:00.000000' };
    api.works = works.map((w) => (w === target ? newer : w));
    api.requests = [];
    let limited = false;
    api.fault = (_req, res) => {
      if (limited) return false;
      limited = true;
      res.writeHead(429, { 'retry-after': '1', 'content-type': 'application/json' });
      res.end('{"error": "Too Many Requests"}');
      return true;
    };
    try {
      const r = await riAsync(['pull', '--data-dir', data], env);
      expect(r.status, r.stderr).toBe(0);
      expect(r.stderr).toMatch(/pull: 429 Too Many Requests: Too Many Requests; retrying in 1\.0 s/);
      expect(api.requests.map((q) => q.cursor).slice(0, 2)).toEqual(['*', '*']);
      expect(api.requests[0]!.filter).toBe(`from_updated_date:${before}`);
      expect(r.stderr).toMatch(/ 0 kept, 1 replaced, /);
      expect(state(data).next_since).toBe('2026-06-01T00:00:00.000000');
    } finally {
      api.works = works;
      api.fault = null;
    }
    const store = await openCorpusStore(join(data, 'corpus.duckdb'));
    try {
      const [row] = await store.rows<{ cited_by_count: number; updated_date: string }>(
        `SELECT cited_by_count, updated_date FROM works WHERE id = ${id}`,
      );
      expect(row).toEqual({ cited_by_count: 12_345, updated_date: '2026-06-01T00:00:00.000000' });
    } finally {
      store.close();
    }
  }, 60_000);

  it('says in one line what is wrong when the user can fix it, and exits non-zero', async () => {
    const data = join(root, 'errors');
    const badSince = await riAsync(['pull', '--since', '2025-13-01', '--data-dir', data], env);
    expect(badSince.status).toBe(2);
    expect(badSince.stderr).toMatch(/^ri: --since must be a date YYYY-MM-DD/);
    expectOneLine(badSince.stderr);

    const noSince = await riAsync(['pull', '--data-dir', data], env);
    expect(noSince.status).toBe(2);
    expect(noSince.stderr).toMatch(/give --since DATE for the first one/);
    expectOneLine(noSince.stderr);

    const badFilter = await riAsync(
      ['pull', '--since', '2025-01-01', '--filter', 'nocolon', '--data-dir', data],
      env,
    );
    expect(badFilter.status).toBe(2);
    expectOneLine(badFilter.stderr);

    const wrongKey = await riAsync(['pull', '--since', '2025-01-01', '--data-dir', data], {
      ...env,
      OPENALEX_API_KEY: 'wrong',
    });
    expect(wrongKey.status).toBe(1);
    expect(wrongKey.stderr).toMatch(/^ri: pull: the OpenAlex API refused the API key \(401 Unauthorized/);
    expect(wrongKey.stderr).not.toMatch(/wrong/); // the key is never echoed
    expectOneLine(wrongKey.stderr);

    const port = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => resolve(p));
      });
    });
    const unreachable = await riAsync(['pull', '--since', '2025-01-01', '--data-dir', data], {
      OPENALEX_API_URL: `http://127.0.0.1:${port}`,
    });
    expect(unreachable.status).toBe(1);
    expect(unreachable.stderr).toMatch(
      /cannot reach the OpenAlex API at http:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED\)/,
    );
    expectOneLine(unreachable.stderr);

    const notUrl = await riAsync(['pull', '--since', '2025-01-01', '--data-dir', data], {
      OPENALEX_API_URL: 'not a url',
    });
    expect(notUrl.status).toBe(1); // a bad configuration value (2 is for bad arguments)
    expect(notUrl.stderr).toMatch(/OPENALEX_API_URL/);
    expectOneLine(notUrl.stderr);

    const badEvery = await riAsync(['update', '--pull', '--every', '5x', '--data-dir', data], env);
    expect(badEvery.status).toBe(2);
    expect(badEvery.stderr).toMatch(/--every must be a duration/);
    expectOneLine(badEvery.stderr);
  }, 60_000);
});

describe('ri update --pull', () => {
  it('pulls, builds and publishes once, or again after each --every interval until stopped', async () => {
    const tiny: Work[] = Array.from({ length: 30 }, (_, i) =>
      work(500 + i, { title: `Iron nickel catalysts ${i}`, updated_date: '2025-02-01T00:00:00' }),
    );
    const api = await startFakeOpenAlex(tiny);
    const env = { OPENALEX_API_URL: api.url };
    try {
      const once = await riAsync(['update', '--pull', '--since', '2025-01-01', '--data-dir', tempDir()], env);
      expect(once.status, once.stderr).toBe(0);
      expect(once.stdout.trim()).toMatch(/^[0-9a-f]{16}$/);

      const data = tempDir();
      const child = spawn(
        process.execPath,
        [MAIN, 'update', '--pull', '--since', '2025-01-01', '--every', '1s', '--data-dir', data],
        { env: { ...process.env, ...env, LOG_LEVEL: 'silent' }, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => {
        stdout += d;
      });
      child.stderr.on('data', (d) => {
        stderr += d;
      });
      const versions = () => stdout.trim().split('\n').filter(Boolean);
      try {
        const first = await until(() => versions()[0], 60_000);
        // The next cycle finds nothing new and keeps the snapshot.
        await until(
          () => (/update: nothing new; snapshot [0-9a-f]{16} stays current/.test(stderr) ? true : undefined),
          60_000,
        );
        api.works = [
          ...tiny,
          ...Array.from({ length: 5 }, (_, i) =>
            work(900 + i, { title: `Cobalt phosphide ${i}`, updated_date: '2025-03-01T00:00:00' }),
          ),
        ];
        const second = await until(() => versions().find((v) => v !== first), 60_000);
        expect(second).toMatch(/^[0-9a-f]{16}$/);
        expect(stderr).toMatch(/update: next pull in 1s/);
        expect(stderr).toMatch(/: 35 read, 5 kept, 0 replaced, 30 unchanged/);
      } finally {
        expect(await stop(child)).toBe(0);
      }
    } finally {
      await api.close();
    }
  }, 180_000);
});
