import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StateStore } from '../../../src/access/state-store.js';
import { loadConfig } from '../../../src/config/config.js';
import { ChangesSchema, SubjectChangesSchema } from '../../../src/contracts/changes.js';
import { type RunningServer, startServer } from '../../../src/http/server.js';
import { snapshotFile } from '../../../src/snapshot/folder.js';
import { SnapshotManager } from '../../../src/snapshot/snapshot.js';
import { emptyState } from '../../helpers/app.js';
import {
  COPPER,
  firstPublication,
  ingestAndBuild,
  LEARNING,
  many,
  NICKEL,
} from '../../helpers/changes-corpus.js';
import { toolError } from '../../helpers/mcp.js';
import { tempDir } from '../../helpers/works.js';

/**
 * What moved per publication, over the real listener: a small corpus published twice (then a
 * third time), whose moves are worked by hand: every title names one element, so an element's RI
 * is 10,000 x its papers in the window / the window's papers. A topic's community turns rising
 * (its recent papers reach the 10 the rule asks for) and a topic is new to the corpus.
 */

let dataDir: string;
let snapshotDir: string;
let manager: SnapshotManager;
let server: RunningServer;
let state: StateStore;
const keys = { free: '', personal: '' };
let A: string;
let B: string;
let C: string;
/** Answers recorded while B was current. */
const atB = new Map<string, string>();

async function publish(records: Record<string, unknown>[]): Promise<string> {
  const built = await ingestAndBuild(dataDir, snapshotDir, records);
  expect(built.changed).toBe(true);
  await manager.refresh();
  return built.version;
}

async function get(path: string, key: string | null = keys.personal) {
  const res = await fetch(`${server.url}${path}`, {
    headers: { 'accept-encoding': 'identity', ...(key ? { authorization: `Bearer ${key}` } : {}) },
  });
  const text = await res.text();
  return { res, text, body: JSON.parse(text) as Record<string, unknown> };
}

type Change = {
  subject_type: string;
  subject_id: string;
  change: string;
  direction: string;
  move: number;
  data_version: string;
  since: string;
  ri: { before: number | null; after: number | null };
  ris: { before: number | null; after: number | null };
  hri: { before: number | null; after: number | null };
  rank: { before: number | null; after: number | null };
  rising: { before: boolean | null; after: boolean | null };
};
const changesOf = (body: Record<string, unknown>) => body.changes as Change[];
const find = (list: Change[], type: string, subjectId: string) =>
  list.find((c) => c.subject_type === type && c.subject_id === subjectId);

/** A topic's community rising in a snapshot's own table (the premise the test is built on). */
function risingIn(version: string, topicId: string): number {
  const db = new Database(snapshotFile(snapshotDir, version), { readonly: true });
  try {
    return db.prepare('SELECT rising FROM communities WHERE topic_id = ?').pluck().get(topicId) as number;
  } finally {
    db.close();
  }
}

beforeAll(async () => {
  dataDir = tempDir('ri-changes-');
  snapshotDir = join(dataDir, 'snapshots');
  manager = new SnapshotManager(snapshotDir);
  state = await emptyState();
  for (const plan of ['free', 'personal'] as const) {
    const account = await state.createAccount({ email: `${plan}@example.org`, plan });
    keys[plan] = (await state.createKey(account.id)).key;
  }
  // A: firstPublication (its window's papers, by hand, in changes-corpus.ts).
  A = await publish(firstPublication());
  await manager.start(50);
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    PUBLIC_URL: 'https://ri.example',
    RATE_LIMIT_PER_IP: '1000000',
    RATE_LIMIT_PER_KEY: '1000000',
    WORKER_THREADS: '0',
  });
  server = await startServer(config, manager, state, () => {});
  // A's own answers, to compare the changes' "before" with.
  for (const path of ['/v1/elements', '/v1/subjects/topic/T200'])
    atB.set(`A ${path}`, (await get(path)).text);
  // B: 3 more nickel papers (12 recent: the community turns rising) and 4 of a topic new to the
  // corpus whose titles name no element: 36 papers in the window.
  B = await publish([
    ...many(3, 'Nickel electrodes for batteries', NICKEL, '2025-07-01'),
    ...many(4, 'Machine learning for materials discovery', LEARNING, '2025-08-01'),
  ]);
}, 120_000);

afterAll(async () => {
  await server?.close();
  manager?.stop();
  await state?.close();
});

describe('changes between two publications', () => {
  it('is empty at a folder first publication, saying why', async () => {
    const { res, body } = await get(`/v1/changes?data_version=${A}`);
    expect(res.status).toBe(200);
    expect(body).toMatchObject({ publications: [], changes: [], total: 0 });
    expect((body.notes as { empty: string }).empty).toMatch(/no publication is covered/);
  });

  it('records the hand-worked moves, the community turning rising and the new topic', async () => {
    expect([risingIn(A, 'T200'), risingIn(B, 'T200')]).toEqual([0, 1]);
    const { res, body } = await get(`/v1/changes?since=${A}&limit=1000`);
    expect(res.status).toBe(200);
    ChangesSchema.parse(body);
    expect(body).toMatchObject({
      since: A,
      data_version: B,
      publications: [{ data_version: B, since: A, changes: body.total }],
      kind: ['element', 'topic', 'keyword'],
    });
    const list = changesOf(body);
    for (const c of list) expect([c.data_version, c.since]).toEqual([B, A]);

    // Iron: 10 of 29 window papers, then 10 of 36; nickel 9 of 29, then 12 of 36.
    const fe = find(list, 'element', 'Fe')!;
    // (RI is stored to 4 decimals.)
    expect(fe.ri.before).toBeCloseTo((10_000 * 10) / 29, 4);
    expect(fe.ri.after).toBeCloseTo((10_000 * 10) / 36, 4);
    // Its RIS stays: its papers, the cut-off and the top element (copper) are the same.
    expect(fe).toMatchObject({ move: 0, direction: 'none' });
    const ni = find(list, 'element', 'Ni')!;
    expect(ni.ri.before).toBeCloseTo((10_000 * 9) / 29, 4);
    expect(ni.ri.after).toBeCloseTo((10_000 * 12) / 36, 4);
    expect(ni).toMatchObject({ change: 'moved', direction: 'up' });

    // Before and after are A's and B's own answers; the rank is among the 118 elements by RIS.
    const elementsAt = (text: string) =>
      (JSON.parse(text) as { elements: { symbol: string; ris: number; ri: number }[] }).elements;
    const before = elementsAt(atB.get('A /v1/elements')!);
    const after = elementsAt((await get('/v1/elements')).text);
    for (const symbol of ['Fe', 'Ni', 'Cu']) {
      const c = find(list, 'element', symbol)!;
      const b = before.find((e) => e.symbol === symbol)!;
      const a = after.find((e) => e.symbol === symbol)!;
      expect([c.ri.before, c.ris.before, c.ri.after, c.ris.after]).toEqual([b.ri, b.ris, a.ri, a.ris]);
      expect(c.rank.before).toBe(1 + before.filter((e) => e.ris > b.ris).length);
      expect(c.rank.after).toBe(1 + after.filter((e) => e.ris > a.ris).length);
      expect(c.move).toBeCloseTo(a.ris - b.ris, 6);
      expect(c.direction).toBe(a.ris > b.ris ? 'up' : a.ris < b.ris ? 'down' : 'none');
    }
    // An element named by no title, before or after, did not move.
    expect(find(list, 'element', 'Au')).toBeUndefined();

    // The nickel topic's community turns rising.
    const t200 = find(list, 'topic', 'T200')!;
    expect(t200.rising).toEqual({ before: false, after: true });
    expect(t200.direction).toBe('up');
    const t200AtA = JSON.parse(atB.get('A /v1/subjects/topic/T200')!) as { ri: number; hri: number | null };
    expect(t200.ri.before).toBe(t200AtA.ri);
    expect(t200.hri.before).toBe(t200AtA.hri);

    // The new topic: nothing before, B's scores after.
    const t400 = find(list, 'topic', 'T400')!;
    const t400Now = (await get('/v1/subjects/topic/T400')).body;
    expect(t400).toMatchObject({
      change: 'new',
      direction: 'up',
      ri: { before: null, after: t400Now.ri },
      ris: { before: null, after: t400Now.ris },
      rank: { before: null },
      rising: { before: null },
    });
    expect(t400.move).toBe(t400Now.ris);

    // Newest publication first, then the largest moves.
    const moves = list.map((c) => Math.abs(c.move));
    expect(moves).toEqual([...moves].sort((x, y) => y - x));

    // Without since: the last publication's, the same here.
    const last = await get('/v1/changes?limit=1000');
    expect(changesOf(last.body)).toEqual(list);
    for (const path of [
      `/v1/changes?since=${A}&limit=1000`,
      '/v1/elements/Fe/changes',
      '/v1/subjects/topic/T200/changes',
    ])
      atB.set(path, (await get(path)).text);
  });

  it('filters by kind, minimum move and direction, and limits', async () => {
    const all = changesOf((await get(`/v1/changes?since=${A}&limit=1000`)).body);
    const elements = changesOf((await get(`/v1/changes?since=${A}&kind=element&limit=1000`)).body);
    expect(elements.length).toBeGreaterThan(0);
    expect(elements).toEqual(all.filter((c) => c.subject_type === 'element'));
    const topics = changesOf((await get(`/v1/changes?since=${A}&kind=topic,element&limit=1000`)).body);
    expect(topics).toEqual(all.filter((c) => c.subject_type !== 'keyword'));

    const big = Math.abs(find(all, 'element', 'Ni')!.move);
    const atLeast = changesOf((await get(`/v1/changes?since=${A}&min_move=${big}&limit=1000`)).body);
    expect(atLeast).toEqual(
      all.filter(
        (c) => Math.abs(c.move) >= big || c.change !== 'moved' || c.rising.before !== c.rising.after,
      ),
    );
    expect(find(atLeast, 'topic', 'T400')).toBeDefined();
    expect(atLeast.length).toBeLessThan(all.length);

    const up = changesOf((await get(`/v1/changes?since=${A}&direction=up&limit=1000`)).body);
    const down = changesOf((await get(`/v1/changes?since=${A}&direction=down&limit=1000`)).body);
    expect(up.every((c) => c.direction === 'up')).toBe(true);
    expect(down.every((c) => c.direction === 'down')).toBe(true);
    expect(up.length + down.length).toBe(all.filter((c) => c.direction !== 'none').length);
    expect(find(up, 'element', 'Ni')).toBeDefined();
    expect(find(up, 'element', 'Fe')).toBeUndefined();

    const one = (await get(`/v1/changes?since=${A}&limit=1`)).body;
    expect(changesOf(one)).toEqual(all.slice(0, 1));
    expect(one.total).toBe(all.length);
  });

  it('per subject: an element and a topic, every publication kept', async () => {
    const fe = await get('/v1/elements/fe/changes');
    expect(fe.res.status).toBe(200);
    SubjectChangesSchema.parse(fe.body);
    expect(fe.body).toMatchObject({ subject_type: 'element', subject_id: 'Fe', name: 'Iron' });
    expect(changesOf(fe.body)).toEqual([
      find(changesOf((await get(`/v1/changes?since=${A}&limit=1000`)).body), 'element', 'Fe'),
    ]);
    const t = await get('/v1/subjects/topic/T400/changes');
    expect(changesOf(t.body).map((c) => c.change)).toEqual(['new']);
    expect(t.body.canonical_url).toBe('https://ri.example/subjects/topic/T400');
  });

  it('answers refusals as problems with their codes, never charged', async () => {
    const cases: [string, number, string][] = [
      ['/v1/changes?since=0123456789abcdef', 404, 'unknown_data_version'],
      ['/v1/elements/Fe/changes?since=0123456789abcdef', 404, 'unknown_data_version'],
      ['/v1/changes?since=zz', 400, 'invalid_parameter'],
      ['/v1/changes?kind=metal', 400, 'invalid_parameter'],
      ['/v1/changes?min_move=-1', 400, 'invalid_parameter'],
      ['/v1/changes?min_move=abc', 400, 'invalid_parameter'],
      ['/v1/changes?direction=sideways', 400, 'invalid_parameter'],
      ['/v1/changes?limit=0', 400, 'invalid_parameter'],
      ['/v1/changes?colour=red', 400, 'invalid_parameter'],
      ['/v1/elements/Xx/changes', 404, 'unknown_symbol'],
      ['/v1/subjects/topic/T99999/changes', 404, 'unknown_subject'],
    ];
    for (const [path, status, code] of cases) {
      const { res, body } = await get(path);
      expect([path, res.status, body.code]).toEqual([path, status, code]);
      expect(res.headers.get('content-type')).toBe('application/problem+json');
    }
    const unknown = (await get('/v1/changes?since=0123456789abcdef')).body;
    expect(unknown.detail).toContain(`since= takes any of ${B}, ${A}`);
    // The answering version itself: nothing after it.
    expect((await get(`/v1/changes?since=${B}`)).body).toMatchObject({ publications: [], changes: [] });
  });

  it('opens each kind to the plan of its subjects', async () => {
    expect((await get('/v1/changes', null)).res.status).toBe(401);
    expect((await get('/v1/elements/Fe/changes', null)).res.status).toBe(401);
    const refused = await get('/v1/changes', keys.free);
    expect(refused.res.status).toBe(403);
    expect(refused.body).toMatchObject({ code: 'plan_required', required_plan: 'personal' });
    expect(refused.body.detail).toContain('kind=element,topic,keyword');
    expect((await get('/v1/changes?kind=keyword', keys.free)).res.status).toBe(403);
    expect((await get('/v1/subjects/topic/T200/changes', keys.free)).res.status).toBe(403);
    const free = await get(`/v1/changes?kind=element&since=${A}`, keys.free);
    expect(free.res.status).toBe(200);
    // HRI as the plan shows it: null for a free key, the numbers for Personal.
    expect(changesOf(free.body).every((c) => c.hri.before === null && c.hri.after === null)).toBe(true);
    const personal = changesOf((await get(`/v1/changes?kind=element&since=${A}`)).body);
    expect(personal.some((c) => c.hri.before !== null || c.hri.after !== null)).toBe(true);
    expect((await get('/v1/elements/Fe/changes', keys.free)).res.status).toBe(200);
  });

  it('over MCP: get_changes with the same parameters and plan', async () => {
    const connect = async (key: string) => {
      const client = new Client({ name: 'ri-test', version: '1.0.0' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
          requestInit: { headers: { authorization: `Bearer ${key}` } },
        }),
      );
      return client;
    };
    const client = await connect(keys.personal);
    try {
      const tools = await client.listTools();
      expect(tools.tools.map((t) => t.name)).toContain('get_changes');
      const r = (await client.callTool({
        name: 'get_changes',
        arguments: { since: A, kind: 'topic', limit: 1000 },
      })) as CallToolResult;
      expect(r.isError ?? false).toBe(false);
      const rest = (await get(`/v1/changes?since=${A}&kind=topic&limit=1000`)).body;
      expect(changesOf(r.structuredContent as Record<string, unknown>)).toEqual(changesOf(rest));
      const bad = (await client.callTool({
        name: 'get_changes',
        arguments: { since: '0123456789abcdef' },
      })) as CallToolResult;
      expect(toolError(bad)?.code).toBe('unknown_data_version');
    } finally {
      await client.close();
    }
    const free = await connect(keys.free);
    try {
      await free.listTools();
      const refused = (await free.callTool({ name: 'get_changes', arguments: {} })) as CallToolResult;
      expect(toolError(refused)).toMatchObject({ code: 'plan_required' });
      const ok = (await free.callTool({
        name: 'get_changes',
        arguments: { kind: 'element', since: A },
      })) as CallToolResult;
      expect(ok.isError ?? false).toBe(false);
    } finally {
      await free.close();
    }
  });
});

it("over MCP: get_changes with symbol or subject_type and subject_id answers as the one subject's route", async () => {
  const connect = async (key: string | null) => {
    const client = new Client({ name: 'ri-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
        requestInit: { headers: key ? { authorization: `Bearer ${key}` } : {} },
      }),
    );
    await client.listTools();
    return client;
  };
  const tool = (client: Client, args: Record<string, unknown>) =>
    client.callTool({ name: 'get_changes', arguments: args }) as Promise<CallToolResult>;
  const personal = await connect(keys.personal);
  const free = await connect(keys.free);
  const anon = await connect(null);
  try {
    const { tools } = await personal.listTools();
    const listed = tools.find((t) => t.name === 'get_changes')!;
    expect(Object.keys(listed.inputSchema.properties!)).toEqual(
      expect.arrayContaining(['kind', 'symbol', 'subject_type', 'subject_id', 'since', 'limit']),
    );
    for (const [args, path, key] of [
      [{ symbol: 'ni' }, '/v1/elements/ni/changes', keys.free],
      [
        { symbol: 'Ni', since: A, min_move: 1, direction: 'up' },
        `/v1/elements/Ni/changes?since=${A}&min_move=1&direction=up`,
        keys.personal,
      ],
      [{ symbol: 'Cu', limit: 1 }, '/v1/elements/Cu/changes?limit=1', keys.personal],
      [{ subject_type: 'topic', subject_id: 'T200' }, '/v1/subjects/topic/T200/changes', keys.personal],
      [
        { subject_type: 'topic', subject_id: 'T200', since: A, direction: 'up' },
        `/v1/subjects/topic/T200/changes?since=${A}&direction=up`,
        keys.personal,
      ],
    ] as const) {
      const client = key === keys.free ? free : personal;
      const r = await tool(client, args);
      expect([args, r.isError ?? false]).toEqual([args, false]);
      const rest = await get(path, key);
      expect(rest.res.status).toBe(200);
      const got = r.structuredContent as Record<string, unknown>;
      // The subject's answer (no kind), every field of it.
      const { notes: _, ...fields } = got;
      SubjectChangesSchema.omit({ notes: true }).strict().parse(fields);
      // The same answer but for the notes every answer shares (MCP names them once, as a resource).
      expect({ ...got, notes: null }).toEqual({ ...rest.body, notes: null });
      expect((got.notes as Record<string, string>).changes).toBe(
        (rest.body.notes as Record<string, string>).changes,
      );
    }
    // Plans as the routes': an element's changes any key, a topic's Personal; none without a key.
    expect((await tool(free, { symbol: 'Fe' })).isError ?? false).toBe(false);
    expect(toolError(await tool(free, { subject_type: 'topic', subject_id: 'T200' }))).toMatchObject({
      code: 'plan_required',
      required_plan: 'personal',
    });
    expect(toolError(await tool(anon, { symbol: 'Fe' }))).toMatchObject({ code: 'authentication_required' });
    // Refusals as REST's: an unknown subject; arguments of two calls at once, or half a subject.
    expect(toolError(await tool(personal, { symbol: 'Xx' }))?.code).toBe('unknown_symbol');
    expect(toolError(await tool(personal, { subject_type: 'topic', subject_id: 'T999999' }))?.code).toBe(
      'unknown_subject',
    );
    for (const args of [
      { symbol: 'Fe', kind: 'element' },
      { symbol: 'Fe', subject_type: 'topic', subject_id: 'T200' },
      { subject_type: 'topic' },
      { subject_id: 'T200' },
      { subject_type: 'galaxy', subject_id: 'x' },
    ])
      expect([args, toolError(await tool(personal, args))?.code]).toEqual([args, 'invalid_parameter']);
  } finally {
    for (const c of [personal, free, anon]) await c.close();
  }
});

describe('a third publication', () => {
  beforeAll(async () => {
    C = await publish(many(5, 'Copper wires in circuits', COPPER, '2025-09-01'));
  }, 120_000);

  it('leaves answers pinned to B as they were, and since=A covers both publications', async () => {
    for (const [path, text] of atB) {
      if (path.startsWith('A ')) continue;
      const pinned = await get(`${path}${path.includes('?') ? '&' : '?'}data_version=${B}`);
      expect([path, pinned.text]).toEqual([path, text]);
    }
    const both = (await get(`/v1/changes?since=${A}&limit=1000`)).body;
    expect(both.publications).toEqual([
      { data_version: C, since: B, changes: expect.any(Number) },
      { data_version: B, since: A, changes: expect.any(Number) },
    ]);
    const list = changesOf(both);
    // Newest publication first; B's changes as B recorded them.
    const firstB = list.findIndex((c) => c.data_version === B);
    expect(list.slice(firstB).every((c) => c.data_version === B)).toBe(true);
    expect(list.slice(firstB)).toEqual(changesOf(JSON.parse(atB.get(`/v1/changes?since=${A}&limit=1000`)!)));
    // C: 5 more copper papers. Copper, the top element, keeps RIS 100 while its RI rises (10 of
    // 36 window papers, then 15 of 41); iron's RIS falls against it.
    const cu = find(list.slice(0, firstB), 'element', 'Cu')!;
    expect(cu).toMatchObject({ since: B, move: 0, direction: 'none', ris: { before: 100, after: 100 } });
    expect(cu.ri.before).toBeCloseTo((10_000 * 10) / 36, 4);
    expect(cu.ri.after).toBeCloseTo((10_000 * 15) / 41, 4);
    expect(find(list.slice(0, firstB), 'element', 'Fe')).toMatchObject({ since: B, direction: 'down' });
    // Only C's since B; the iron element's, once per publication.
    expect(
      changesOf((await get(`/v1/changes?since=${B}&limit=1000`)).body).every((c) => c.data_version === C),
    ).toBe(true);
    expect(changesOf((await get('/v1/elements/Fe/changes')).body).map((c) => c.data_version)).toEqual([C, B]);
  });
});
