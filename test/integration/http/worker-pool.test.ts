import { closeSync, copyFileSync, mkdirSync, openSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/config.js';
import { RESEARCH_COLUMNS } from '../../../src/core/research/candidates.js';
import { rehearsalQuestions } from '../../../src/core/research/rehearsal.js';
import { inThread, type WorkerPool } from '../../../src/core/worker-pool.js';
import { createApp } from '../../../src/http/app.js';
import { snapshotFile } from '../../../src/snapshot/folder.js';
import { paperColumn } from '../../../src/snapshot/paper-columns.js';
import { type Snapshot, SnapshotManager } from '../../../src/snapshot/snapshot.js';
import { workerPool } from '../../../src/worker-pool/pool.js';
import { bearer, sampleApp } from '../../helpers/app.js';
import { tempDir } from '../../helpers/works.js';

type Ctx = Awaited<ReturnType<typeof sampleApp>>;
// Rehearsed from any size (by default from 100,000 papers), so the small sample is.
const pool = workerPool({ threads: 2, maxQueue: 16, deadlineMs: 20_000, rehearseFromPapers: 0 });
let ctx: Ctx;

beforeAll(async () => {
  ctx = await sampleApp({}, { workerPool: pool });
}, 120_000);

afterAll(async () => {
  await ctx?.close();
  await pool.close();
});

const viewer = { hriAvailable: true, publicUrl: 'https://ri.example' };

describe('research and lab answers in worker threads', () => {
  it('a worker answers exactly as the event loop thread does (research, lab quote, lab run)', async () => {
    const snapshot = ctx.snapshots.acquire()!;
    try {
      const research = {
        kind: 'research' as const,
        request: {
          q: 'oxygen evolution nickel iron',
          pageSize: 5,
          lenses: ['foundational' as const, 'now' as const, 'newest' as const],
          page: 1,
        },
        viewer,
      };
      expect(await pool.run(snapshot, research)).toEqual(await inThread.run(snapshot, research));
      // As JSON text (what the REST route sends): the same answer's exact text, and its page count.
      const asText = { ...research, kind: 'researchJson' as const };
      const { json, pages } = await pool.run<import('../../../src/core/worker-tasks.js').ResearchJson>(
        snapshot,
        asText,
      );
      expect(typeof json).toBe('string');
      const direct = await inThread.run<import('../../../src/core/research.js').ResearchAnswer>(
        snapshot,
        research,
      );
      expect(json).toBe(JSON.stringify(direct));
      expect(pages).toBe(direct.pages);
      const quote = {
        kind: 'labQuote' as const,
        input: '(Ni OR Co) Fe',
        viewer,
        secret: 's'.repeat(32),
        ttlSeconds: 900,
        nowMs: Date.parse('2026-11-23T12:00:00Z'),
      };
      const fromPool = await pool.run<import('../../../src/core/lab.js').LabQuote>(snapshot, quote);
      expect(fromPool).toEqual(await inThread.run(snapshot, quote));
      const run = { kind: 'labRun' as const, quote: fromPool, depth: 'papers_20' as const, viewer };
      expect(await pool.run(snapshot, run)).toEqual(await inThread.run(snapshot, run));
    } finally {
      snapshot.release();
    }
  });

  it('warms each worker for a snapshot, and answers the same after it', async () => {
    const snapshot = ctx.snapshots.acquire()!;
    try {
      expect(await pool.run(snapshot, { kind: 'warm' })).toBe('warm');
      // One worker reads research's columns into shared memory, the other takes them.
      await pool.warm(snapshot);
      expect(RESEARCH_COLUMNS.length).toBeGreaterThan(5);
      expect(pool.stats().sharedColumnBytes).toBe(
        RESEARCH_COLUMNS.reduce((n, name) => n + paperColumn(snapshot, name).byteLength, 0),
      );
      // Then each worker's chain asked every rehearsal question once (research/rehearsal.ts).
      const papers = Number(snapshot.meta.corpus_papers);
      expect(pool.stats().rehearsed).toBe(2 * rehearsalQuestions(snapshot.reader, papers).length);
      // By default only snapshots of 100,000 papers or more are rehearsed: not the sample.
      const byDefault = workerPool({ threads: 1 });
      await byDefault.warm(snapshot);
      expect(byDefault.stats().rehearsed).toBe(0);
      await byDefault.close();
      const research = {
        kind: 'research' as const,
        request: {
          q: 'reservoir porosity carbonate',
          pageSize: 5,
          lenses: ['foundational' as const],
          page: 2,
        },
        viewer,
      };
      expect(await pool.run(snapshot, research)).toEqual(await inThread.run(snapshot, research));
      // Asked while the columns are being shared again (a publication): it waits, and answers the same.
      const sharing = pool.warm(snapshot);
      expect(await pool.run(snapshot, research)).toEqual(await inThread.run(snapshot, research));
      await sharing;
      expect(pool.stats().sharedColumnBytes).toBeGreaterThan(0);
    } finally {
      snapshot.release();
    }
  });

  it('over HTTP: the pool answers REST research and lab as before, and its errors keep their codes', async () => {
    const pro = bearer(ctx.keys.professional);
    const r = await ctx.app.request('/v1/research?q=oxygen%20evolution&page_size=3', pro);
    expect(r.status).toBe(200);
    const body = (await r.json()) as { matched_papers: number };
    expect(body.matched_papers).toBeGreaterThan(0);
    const none = await ctx.app.request('/v1/research?q=zzqxv%20wwkpj', pro);
    expect(none.status).toBe(404);
    expect(((await none.json()) as { code: string }).code).toBe('nothing_matched');
    const quote = await ctx.app.request('/v1/lab/quote?q=Ni%20Fe', pro);
    expect(quote.status).toBe(200);
    const { quote_id } = (await quote.json()) as { quote_id: string };
    const run = await ctx.app.request(`/v1/lab/run?quote_id=${quote_id}&depth=papers_20`, pro);
    expect(run.status).toBe(200);
    const bad = await ctx.app.request('/v1/lab/quote?q=-Fe', pro);
    expect(((await bad.json()) as { code: string }).code).toBe('unusable_query');
  });

  it('past the deadline or the queue bound: 503 overloaded with Retry-After, and never cached', async () => {
    // Apps over the same snapshot and state store as ctx, each with its own pool.
    const appWith = (pool: WorkerPool) =>
      createApp({
        config: loadConfig({}, { PUBLIC_URL: 'https://ri.example' }),
        snapshots: ctx.snapshots,
        state: ctx.state,
        workerPool: pool,
      });
    const pro = bearer(ctx.keys.professional);
    const tight = workerPool({ threads: 1, maxQueue: 1, deadlineMs: 1 });
    try {
      const busy = appWith(tight);
      const path = '/v1/research?q=perovskite%20solar%20cells&page_size=5';
      const r = await busy.request(path, pro);
      expect(r.status).toBe(503);
      expect(r.headers.get('retry-after')).toBe('2');
      expect(((await r.json()) as { code: string }).code).toBe('overloaded');
      // The same question, with the room to answer it: computed, not a cached 503 (the response
      // cache is shared by every app in this process); once cached, even the busy app serves it.
      expect((await appWith(pool).request(path, pro)).status).toBe(200);
      expect((await busy.request(path, pro)).status).toBe(200);
    } finally {
      await tight.close();
    }
    const narrow = workerPool({ threads: 1, maxQueue: 1, deadlineMs: 20_000 });
    try {
      const crowded = appWith(narrow);
      const answers = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          crowded.request(`/v1/research?q=catalyst%20${i}%20oxide&page_size=5`, pro),
        ),
      );
      const codes = await Promise.all(
        answers.map(async (a) => (a.status === 503 ? ((await a.json()) as { code: string }).code : a.status)),
      );
      expect(codes).toContain('overloaded');
      expect(codes.filter((c) => c === 200 || c === 404).length).toBeGreaterThan(0);
    } finally {
      await narrow.close();
    }
  });

  it("a worker's failure is a 503 worker_unavailable (never a 400 or a 500), its cause logged", async () => {
    const logged: string[] = [];
    const own = workerPool({ threads: 1, log: (_msg, fields) => logged.push(String(fields.err)) });
    const task = {
      kind: 'labQuote' as const,
      input: 'Fe',
      viewer,
      secret: 's'.repeat(32),
      ttlSeconds: 9,
      nowMs: 0,
    };
    // A file the worker cannot open (SQLite's SQLITE_CANTOPEN, not a damaged page).
    const gone = { path: '/nonexistent/x.sqlite', version: '0'.repeat(16), file: '' } as Snapshot;
    await expect(own.run(gone, task)).rejects.toMatchObject({ code: 'worker_unavailable', status: 503 });
    expect(logged.join('\n')).toMatch(/Cannot open database/);
    await own.close();
  });

  it('/readyz is not ready while the workers cannot read the served snapshot, and a request gets 503', async () => {
    // A copy of the sample's snapshot, served by a manager that is not polling: the main thread
    // has not looked at the file again, the workers open it on their own.
    const dir = join(tempDir('ri-workers-readyz-'), 'snapshots');
    mkdirSync(dir);
    copyFileSync(snapshotFile(ctx.snapshots.dir, ctx.version), snapshotFile(dir, ctx.version));
    writeFileSync(join(dir, 'CURRENT'), `${ctx.version}\n`);
    const snapshots = new SnapshotManager(dir);
    await snapshots.refresh();
    const own = workerPool({ threads: 1, maxQueue: 4, deadlineMs: 20_000 });
    try {
      const app = createApp({
        config: loadConfig({}, { PUBLIC_URL: 'https://ri.example' }),
        snapshots,
        state: ctx.state,
        workerPool: own,
      });
      // The worker started and the file opened before /readyz asks.
      const served = snapshots.acquire()!;
      await own.run(served, { kind: 'probe' }).finally(() => served.release());
      const ok = await app.request('/readyz');
      expect(ok.status).toBe(200);
      expect(await ok.json()).toMatchObject({ ready: true, status: 'ok' });
      expect(await ok.json().catch(() => ({}))).not.toHaveProperty('workers');

      // Its first page zeroed: SQLite's header, which a connection reads before each query.
      const fd = openSync(snapshotFile(dir, ctx.version), 'r+');
      writeSync(fd, Buffer.alloc(4096, 0), 0, 4096, 0);
      closeSync(fd);
      const down = await app.request('/readyz');
      expect(down.status).toBe(503);
      expect(await down.json()).toMatchObject({
        ready: false,
        status: 'unavailable',
        data_version: ctx.version,
        workers: expect.stringMatching(/research and lab workers/),
      });
      const research = await app.request(
        '/v1/research?q=oxygen%20evolution&page_size=3',
        bearer(ctx.keys.professional),
      );
      expect(research.status).toBe(503);
      expect(research.headers.get('content-type')).toBe('application/problem+json');
      expect(((await research.json()) as { code: string }).code).toBe('data_unavailable');
    } finally {
      await snapshots.refresh(); // the check the 503 started, done before the manager stops
      snapshots.stop();
      await own.close();
    }
  });
});
