import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StateStore } from '../../../src/access/state-store.js';
import { loadConfig } from '../../../src/config/config.js';
import { type RunningServer, startServer } from '../../../src/http/server.js';
import { ingest } from '../../../src/ingest/ingest.js';
import { expandWorksPaths } from '../../../src/ingest/sources.js';
import { snapshotFile } from '../../../src/snapshot/folder.js';
import { SnapshotManager } from '../../../src/snapshot/snapshot.js';
import { buildSnapshot } from '../../../src/snapshot-build/build-snapshot.js';
import { emptyState } from '../../helpers/app.js';
import { toolError } from '../../helpers/mcp.js';
import { sampleDataDir } from '../../helpers/sample.js';
import { tempDir, work, writeWorks } from '../../helpers/works.js';

/**
 * Reproducible answers over real HTTP: answers recorded while version A is current are asked
 * again, pinned to A, after B (and then C) are published; a pruned version is 410.
 */
let dataDir: string;
let snapshotDir: string;
let versionA: string;
let versionB: string;
let versionC: string;
let manager: SnapshotManager;
let server: RunningServer;
let state: StateStore;
let key: string;

/** Answers of A, recorded while A was current, by request. */
const recorded = new Map<string, string>();

const READS: { path: string; keyed?: boolean; csv?: boolean }[] = [
  { path: '/v1/elements' },
  { path: '/v1/elements/Fe' },
  { path: '/v1/elements?symbols=Fe,Ni,Co' },
  { path: '/v1/elements/Fe/history', keyed: true },
  { path: '/v1/elements/Fe/history', keyed: true, csv: true },
  { path: '/v1/elements/Fe/papers?limit=5', keyed: true },
];

const label = (r: (typeof READS)[number]) => `${r.path}${r.csv ? ' (csv)' : ''}`;

async function get(
  path: string,
  options: { keyed?: boolean; csv?: boolean; headers?: Record<string, string> } = {},
) {
  const res = await fetch(`${server.url}${path}`, {
    headers: {
      'accept-encoding': 'identity',
      ...(options.keyed ? { authorization: `Bearer ${key}` } : {}),
      ...(options.csv ? { accept: 'text/csv' } : {}),
      ...options.headers,
    },
  });
  return { res, text: await res.text() };
}

const pin = (path: string, version: string) =>
  `${path}${path.includes('?') ? '&' : '?'}data_version=${version}`;

/** Ingests a few iron papers and publishes the rebuilt snapshot (a new version, Fe's RI moves). */
async function publishMore(startId: number, keep: number) {
  const extra = Array.from({ length: 15 }, (_, i) =>
    work(startId + i, {
      title: `Iron nitride catalyst ${i}`,
      publication_date: '2025-11-01',
      publication_year: 2025,
    }),
  );
  const file = writeWorks(join(tempDir(), `extra-${startId}.jsonl`), extra);
  await ingest(join(dataDir, 'corpus.duckdb'), expandWorksPaths([file]));
  const built = await buildSnapshot(join(dataDir, 'corpus.duckdb'), snapshotDir, { keep });
  expect(built.changed).toBe(true);
  await manager.refresh();
  expect(manager.version).toBe(built.version);
  return built.version;
}

beforeAll(async () => {
  ({ dataDir, snapshots: snapshotDir, version: versionA } = await sampleDataDir());
  manager = new SnapshotManager(snapshotDir);
  await manager.start(50);
  state = await emptyState();
  const account = await state.createAccount({ email: 'pro@example.org', plan: 'professional' });
  key = (await state.createKey(account.id)).key;
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    PUBLIC_URL: 'https://ri.example',
    RATE_LIMIT_PER_IP: '1000000',
    RATE_LIMIT_PER_KEY: '1000000',
    // Research in this thread, from src (a pool's workers run dist/).
    WORKER_THREADS: '0',
  });
  server = await startServer(config, manager, state, () => {});
  for (const r of READS) {
    const { res, text } = await get(r.path, r);
    expect(res.status, label(r)).toBe(200);
    recorded.set(label(r), text);
  }
  versionB = await publishMore(990_000_001, 5);
}, 120_000);

afterAll(async () => {
  await server?.close();
  manager?.stop();
  await state?.close();
});

describe('pinned reads', () => {
  it('answer with the bytes given when the version was current (query and header)', async () => {
    // The test can fail: the current answer is not A's any more.
    const now = await get('/v1/elements/Fe');
    expect(JSON.parse(now.text).data_version).toBe(versionB);
    expect(now.text).not.toBe(recorded.get('/v1/elements/Fe'));

    for (const r of READS) {
      // The current answer first, so a pinned answer of the same URL meets a filled cache.
      const current = await get(r.path, r);
      expect(current.res.status).toBe(200);
      const byQuery = await get(pin(r.path, versionA), r);
      expect(byQuery.res.status, label(r)).toBe(200);
      expect(byQuery.text, label(r)).toBe(recorded.get(label(r)));
      const byHeader = await get(r.path, { ...r, headers: { 'ri-data-version': versionA } });
      expect(byHeader.res.status, label(r)).toBe(200);
      expect(byHeader.text, label(r)).toBe(recorded.get(label(r)));
      expect(byHeader.res.headers.get('etag')).not.toBe(current.res.headers.get('etag'));
      // Asked again, from the cache: still A's bytes, varying by the header; the unpinned URL is still B's.
      const again = await get(r.path, { ...r, headers: { 'ri-data-version': versionA } });
      expect(again.text, label(r)).toBe(recorded.get(label(r)));
      expect(again.res.headers.get('vary'), label(r)).toContain('RI-Data-Version');
      expect((await get(r.path, r)).text).toBe(current.text);
      // Pinning the current version is the current answer.
      expect((await get(pin(r.path, versionB), r)).text).toBe(current.text);
    }
  });

  it('cite the answer in notes by canonical_url and data_version', async () => {
    const { text } = await get(pin('/v1/elements/Fe', versionA));
    const body = JSON.parse(text);
    expect(body.data_version).toBe(versionA);
    expect(body.notes.cite).toContain('canonical_url');
    expect(body.notes.cite).toContain(`data_version=${versionA}`);
  });

  it("research's next keeps to the page's data_version after a republish, on REST and MCP", async () => {
    const question = '/v1/research?q=reservoir%20porosity%20carbonate&page_size=1&lenses=now';
    const pinned = JSON.parse((await get(pin(question, versionA), { keyed: true })).text);
    expect(pinned.data_version).toBe(versionA);
    const next = new URL(pinned.next.url);
    expect(next.searchParams.get('data_version')).toBe(versionA);
    // Followed as given, after B was published: page 2 of A's answer, not B's.
    const page2 = await get(`${next.pathname}${next.search}`, { keyed: true });
    expect(page2.res.status).toBe(200);
    expect(JSON.parse(page2.text)).toMatchObject({ page: 2, data_version: versionA });
    // An unpinned page names the current version.
    const current = JSON.parse((await get(question, { keyed: true })).text);
    expect(new URL(current.next.url).searchParams.get('data_version')).toBe(versionB);

    const client = new Client({ name: 'ri-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${key}` } },
      }),
    );
    try {
      await client.listTools();
      const args = { q: 'reservoir porosity carbonate', page_size: 1, lenses: 'now' };
      const tool = (await client.callTool({
        name: 'research',
        arguments: { ...args, data_version: versionA },
      })) as CallToolResult;
      expect(tool.isError ?? false).toBe(false);
      const toolNext = new URL((tool.structuredContent as { next: { url: string } }).next.url);
      expect(toolNext.searchParams.get('data_version')).toBe(versionA);
      const following = (await client.callTool({
        name: 'research',
        arguments: {
          ...args,
          page: Number(toolNext.searchParams.get('page')),
          data_version: toolNext.searchParams.get('data_version'),
        },
      })) as CallToolResult;
      expect(following.structuredContent).toMatchObject({ page: 2, data_version: versionA });
    } finally {
      await client.close();
    }
  });

  it('lists the kept versions at /v1/versions', async () => {
    const { res, text } = await get('/v1/versions');
    expect(res.status).toBe(200);
    const body = JSON.parse(text);
    expect(body.current_version).toBe(versionB);
    expect(body.data_version).toBe(versionB);
    expect(body.versions.map((v: { data_version: string }) => v.data_version)).toEqual([versionB, versionA]);
    const [b, a] = body.versions;
    expect(b.current).toBe(true);
    expect(a.current).toBe(false);
    expect(b.works).toBe(a.works + 15);
    expect(a.cutoff_date).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(Date.parse(b.published_at)).toBeGreaterThanOrEqual(Date.parse(a.published_at));
    expect(body.notes.cite).toContain('410');
  });

  it('answers a pruned version 410 data_version_gone naming the current one, and closes it', async () => {
    expect(manager.pinnedVersions()).toContain(versionA);
    versionC = await publishMore(990_000_101, 2);
    expect(existsSync(snapshotFile(snapshotDir, versionA))).toBe(false);
    await manager.refresh();
    expect(manager.pinnedVersions()).not.toContain(versionA);

    for (const ask of [
      () => get(pin('/v1/elements/Fe', versionA)),
      () => get('/v1/elements/Fe', { headers: { 'ri-data-version': versionA } }),
      () => get(pin('/v1/elements/Fe', '0123456789abcdef')),
    ]) {
      const { res, text } = await ask();
      expect(res.status).toBe(410);
      expect(res.headers.get('content-type')).toBe('application/problem+json');
      const problem = JSON.parse(text);
      expect(problem.code).toBe('data_version_gone');
      expect(problem.current_version).toBe(versionC);
      expect(problem.detail).toContain(versionC);
    }
    // B is still kept (the previous one) and still answers.
    expect(JSON.parse((await get(pin('/v1/elements/Fe', versionB))).text).data_version).toBe(versionB);
    const listed = JSON.parse((await get('/v1/versions')).text);
    expect(listed.versions.map((v: { data_version: string }) => v.data_version)).toEqual([
      versionC,
      versionB,
    ]);
  });

  it('refuses a malformed version, two different ones, and a pin where none applies, as 400 problems', async () => {
    const cases: [string, Record<string, string>, string][] = [
      ['/v1/elements/Fe?data_version=latest', {}, 'data_version'],
      ['/v1/elements/Fe?data_version=', {}, 'data_version'],
      ['/v1/elements/Fe', { 'ri-data-version': 'ABCDEF0123456789' }, 'RI-Data-Version'],
      [pin('/v1/elements/Fe', versionB), { 'ri-data-version': versionC }, 'RI-Data-Version'],
      [pin('/v1/versions', versionB), {}, 'data_version'],
      [
        `/v1/lab/quote?q=${encodeURIComponent('element:Fe')}`,
        { 'ri-data-version': versionB },
        'RI-Data-Version',
      ],
    ];
    for (const [path, headers, parameter] of cases) {
      const { res, text } = await get(path, { headers });
      expect(res.status, path).toBe(400);
      expect(res.headers.get('content-type')).toBe('application/problem+json');
      expect(JSON.parse(text)).toMatchObject({ code: 'invalid_parameter', parameter });
    }
  });

  it('documents data_version and RI-Data-Version in the OpenAPI document, and the new code', async () => {
    const doc = JSON.parse((await get('/v1/openapi.json')).text);
    const params = doc.paths['/elements/{symbol}'].get.parameters as { name: string; in: string }[];
    expect(params).toContainEqual(expect.objectContaining({ name: 'data_version', in: 'query' }));
    expect(params).toContainEqual(expect.objectContaining({ name: 'RI-Data-Version', in: 'header' }));
    expect(doc.paths['/versions'].get.operationId).toBe('listVersions');
    const errors = await get('/docs/errors');
    expect(errors.text).toContain('data_version_gone');
  });

  it('pins MCP read tools with a data_version argument, as on REST', async () => {
    const connect = async () => {
      const client = new Client({ name: 'ri-test', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`)));
      return client;
    };
    const client = await connect();
    try {
      // As every host does: the tools first (the SDK then checks each result against them).
      const { tools } = await client.listTools();
      const fe = tools.find((t) => t.name === 'get_element_ri')!;
      expect(Object.keys(fe.inputSchema.properties ?? {})).toContain('data_version');
      expect(
        Object.keys(tools.find((t) => t.name === 'lab_quote')!.inputSchema.properties ?? {}),
      ).not.toContain('data_version');
      const call = async (args: Record<string, unknown>) =>
        (await client.callTool({ name: 'get_element_ri', arguments: args })) as CallToolResult;
      const pinned = await call({ symbol: 'Fe', data_version: versionB });
      expect(pinned.isError ?? false).toBe(false);
      const rest = JSON.parse((await get(pin('/v1/elements/Fe', versionB))).text);
      const got = pinned.structuredContent as typeof rest;
      expect({ ...got, notes: null }).toEqual({ ...rest, notes: null });
      // The notes it shares with every answer of that version, from that version's resource.
      // (Without a key, why HRI is null is this answer's own note.)
      const { hri, ...general } = rest.notes;
      expect(hri).toMatch(/HRI is null/);
      expect(got.notes).toEqual({ read: `research-intensity://notes/${versionB}`, hri });
      const { contents } = await client.readResource({ uri: got.notes.read });
      const shared = JSON.parse((contents[0] as { text: string }).text);
      expect(shared).toEqual({ data_version: versionB, notes: expect.objectContaining(general) });
      await expect(client.readResource({ uri: `research-intensity://notes/${versionA}` })).rejects.toThrow(
        /not found/i,
      );
      const gone = await call({ symbol: 'Fe', data_version: versionA });
      expect(gone.isError).toBe(true);
      expect(toolError(gone)).toMatchObject({ code: 'data_version_gone', current_version: versionC });
      const bad = await call({ symbol: 'Fe', data_version: 'latest' });
      expect(toolError(bad)).toMatchObject({ code: 'invalid_parameter', parameter: 'data_version' });
    } finally {
      await client.close();
    }
  });
});
