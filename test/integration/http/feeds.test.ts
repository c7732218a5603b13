import { join } from 'node:path';
import { parseFeed } from '@rowanmanning/feed-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StateStore } from '../../../src/access/state-store.js';
import { loadConfig } from '../../../src/config/config.js';
import { type RunningServer, startServer } from '../../../src/http/server.js';
import { SnapshotManager } from '../../../src/snapshot/snapshot.js';
import { buildSnapshot } from '../../../src/snapshot-build/build-snapshot.js';
import { emptyState } from '../../helpers/app.js';
import {
  COPPER,
  firstPublication,
  ingestAndBuild,
  LEARNING,
  many,
  NICKEL,
  paper,
} from '../../helpers/changes-corpus.js';
import { tempDir } from '../../helpers/works.js';

/**
 * The Atom feeds of the changes, over the real listener: a small corpus published twice (then
 * rebuilt, then published a third time), each feed parsed by a real feed parser
 * (@rowanmanning/feed-parser, not the package that writes them) and held against the /v1 changes
 * answers it is made of.
 */

const PUBLIC_URL = 'https://ri.example';
let dataDir: string;
let snapshotDir: string;
let manager: SnapshotManager;
let server: RunningServer;
let state: StateStore;
const keys = { free: '', personal: '' };
const tokens = { free: '', personal: '' };
const accounts = { free: '', personal: '' };
let A: string;
let B: string;

/** The works of each publication, in order, to build them again elsewhere. */
const published: Record<string, unknown>[][] = [];

/** Ingests `records` into the corpus in `dir` and builds a snapshot there; its data version. */
async function build(dir: string, records: Record<string, unknown>[]): Promise<string> {
  const built = await ingestAndBuild(dir, join(dir, 'snapshots'), records);
  expect(built.changed).toBe(true);
  return built.version;
}

async function publish(records: Record<string, unknown>[]): Promise<string> {
  published.push(records);
  const version = await build(dataDir, records);
  await manager.refresh();
  return version;
}

/** A request as a feed reader makes it: no header but Accept-Encoding. */
async function get(path: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${server.url}${path}`, { headers: { 'accept-encoding': 'identity', ...headers } });
  return { res, text: await res.text() };
}
const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
async function json(path: string, key: string) {
  const { res, text } = await get(path, bearer(key));
  expect([path, res.status]).toEqual([path, 200]);
  return JSON.parse(text) as { changes: Change[]; data_version: string };
}

type Change = {
  subject_type: string;
  subject_id: string;
  name: string;
  change: string;
  direction: string;
  move: number;
  data_version: string;
  since: string;
  ris: { before: number | null; after: number | null };
  hri: { before: number | null; after: number | null };
  canonical_url: string;
};

/** A feed fetched and parsed, with the checks every feed must pass. */
async function feed(path: string, headers: Record<string, string> = {}) {
  const { res, text } = await get(path, headers);
  expect([path, res.status, res.headers.get('content-type')]).toEqual([
    path,
    200,
    'application/atom+xml; charset=utf-8',
  ]);
  const parsed = parseFeed(text);
  expect(parsed.meta).toEqual({ type: 'atom', version: '1.0' });
  // What Atom 1.0 requires (RFC 4287 4.1.1, 4.1.2): the feed's id, title, updated and author; each
  // entry's id, title and updated (and, with no content, a link and a summary).
  expect(text).toMatch(
    /^<\?xml version="1.0" encoding="utf-8"\?>\s*<feed xmlns="http:\/\/www.w3.org\/2005\/Atom">/,
  );
  const head = text.slice(0, text.indexOf('<entry>') >= 0 ? text.indexOf('<entry>') : undefined);
  expect(head).toMatch(/<id>tag:ri\.example,2026:feeds\//);
  expect(parsed.title).not.toBe('');
  expect(parsed.updated).toBeInstanceOf(Date);
  expect(parsed.authors.map((a) => a.name)).toEqual(['Research Intensity']);
  const entries = text.split('<entry>').slice(1);
  expect(entries).toHaveLength(parsed.items.length);
  for (const [i, item] of parsed.items.entries()) {
    for (const tag of ['id', 'title', 'updated', 'summary']) expect(entries[i]).toContain(`<${tag}`);
    expect(item.id).toMatch(/^tag:ri\.example,2026:[0-9a-f]{16}\/(element|topic|keyword)\//);
    expect(item.updated).toBeInstanceOf(Date);
    expect(item.url).toMatch(/^https:\/\/ri\.example\//);
  }
  // Ids are unique within a feed (one entry per publication and subject).
  expect(new Set(parsed.items.map((i) => i.id)).size).toBe(parsed.items.length);
  return { res, text, parsed };
}

/** The entry id a change must have. */
const idOf = (c: Change) =>
  `tag:ri.example,2026:${c.data_version}/${c.subject_type}/${encodeURIComponent(c.subject_id)}`;

/** The cut-off date each published version reports (/v1/versions), as an entry's updated. */
async function cutoffOf(version: string): Promise<string> {
  const { versions } = JSON.parse((await get('/v1/versions')).text) as {
    versions: { data_version: string; cutoff_date: string }[];
  };
  return `${versions.find((v) => v.data_version === version)!.cutoff_date}T00:00:00.000Z`;
}

/** A feed's entries held against the changes answer it is made of: the same changes, in its order. */
async function expectEntries(items: ReturnType<typeof parseFeed>['items'], changes: Change[]) {
  expect(items.map((i) => i.id)).toEqual(changes.map(idOf));
  for (const [i, c] of changes.entries()) {
    const item = items[i]!;
    expect(item.updated?.toISOString()).toBe(await cutoffOf(c.data_version));
    if (c.change !== 'gone') expect(item.url).toBe(c.canonical_url);
    expect(item.title).toContain(c.subject_type === 'element' ? `(${c.subject_id})` : c.name);
    if (c.change === 'moved' && c.move !== 0)
      expect(item.title).toContain(`(${c.move > 0 ? '+' : ''}${c.move.toFixed(1)})`);
    expect(item.description).toContain(`Data version ${c.data_version}, compared with ${c.since}`);
  }
}

beforeAll(async () => {
  dataDir = tempDir('ri-feeds-');
  snapshotDir = join(dataDir, 'snapshots');
  manager = new SnapshotManager(snapshotDir);
  state = await emptyState();
  for (const plan of ['free', 'personal'] as const) {
    const account = await state.createAccount({ email: `${plan}@example.org`, plan });
    accounts[plan] = account.id;
    keys[plan] = (await state.createKey(account.id)).key;
    tokens[plan] = (await state.createFeedToken(account.id)).token;
  }
  A = await publish(firstPublication());
  await manager.start(50);
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    PUBLIC_URL,
    RATE_LIMIT_PER_IP: '1000000',
    RATE_LIMIT_PER_KEY: '1000000',
    WORKER_THREADS: '0',
  });
  server = await startServer(config, manager, state, () => {});
  // B: the nickel community turns rising, a new topic, and the elements' RI and RIS move; a
  // paper of 2025-11-20 moves the cut-off (A's is 2025-11-01), so each publication has its date.
  B = await publish([
    ...many(3, 'Nickel electrodes for batteries', NICKEL, '2025-07-01'),
    ...many(4, 'Machine learning for materials discovery', LEARNING, '2025-08-01'),
    paper('Copper wires in circuits', COPPER, '2025-11-20'),
  ]);
}, 120_000);

afterAll(async () => {
  await server?.close();
  manager?.stop();
  await state?.close();
});

describe('the feeds of the changes', () => {
  it("an element's feed: open, each entry a change /v1/elements/{symbol}/changes answers", async () => {
    const { parsed, res } = await feed('/v1/feeds/elements/ni');
    const { changes } = await json('/v1/elements/Ni/changes', keys.free);
    expect(changes.length).toBeGreaterThan(0);
    await expectEntries(parsed.items, changes);
    expect(parsed.title).toBe('Nickel (Ni): changes in research intensity');
    expect(parsed.url).toBe(`${PUBLIC_URL}/elements/Ni`);
    expect(parsed.self).toBe(`${PUBLIC_URL}/v1/feeds/elements/ni`);
    expect(res.headers.get('ri-data-version')).toBe(B);
    // Anonymous: HRI is not shown, as the changes of a free key do not show it.
    expect(parsed.items.every((i) => !i.description?.includes('>HRI<'))).toBe(true);
  });

  it('what rose most per kind: the largest rises of each publication, as /v1/changes lists them', async () => {
    const { parsed } = await feed('/v1/feeds/rising?kind=element');
    const ups = (await json(`/v1/changes?kind=element&direction=up&since=${A}&limit=1000`, keys.free))
      .changes;
    expect(ups.length).toBeGreaterThan(0);
    await expectEntries(parsed.items, ups.slice(0, 10));
    expect(parsed.items.some((i) => i.id?.endsWith('/element/Ni'))).toBe(true);
    // Topics: with a Personal feed token; the new topic and the community turning rising are rises.
    const topics = await feed(`/v1/feeds/rising?kind=topic&token=${tokens.personal}`);
    const topicUps = (await json(`/v1/changes?kind=topic&direction=up&since=${A}&limit=1000`, keys.personal))
      .changes;
    await expectEntries(topics.parsed.items, topicUps.slice(0, 10));
    expect(topics.parsed.items.map((i) => i.id)).toEqual(
      expect.arrayContaining([`tag:ri.example,2026:${B}/topic/T400`, `tag:ri.example,2026:${B}/topic/T200`]),
    );
    // Its self link is the address asked, token included (what the reader keeps anyway).
    expect(topics.parsed.self).toBe(`${PUBLIC_URL}/v1/feeds/rising?kind=topic&token=${tokens.personal}`);
  });

  it("a set of subjects named in the URL: each one's changes, newest first, then the largest moves", async () => {
    const { parsed } = await feed('/v1/feeds/subjects?subjects=element/Fe,element/Ni,element/fe');
    const fe = (await json('/v1/elements/Fe/changes', keys.free)).changes;
    const ni = (await json('/v1/elements/Ni/changes', keys.free)).changes;
    const both = [...fe, ...ni].sort((x, y) => Math.abs(y.move) - Math.abs(x.move));
    await expectEntries(parsed.items, both);
    // The same set in another order is the same feed.
    const again = await feed('/v1/feeds/subjects?subjects=element/Ni,element/Fe');
    expect(again.text.replace(/<link rel="self"[^>]*>/, '')).toBe(
      (await get('/v1/feeds/subjects?subjects=element/Fe,element/Ni')).text.replace(
        /<link rel="self"[^>]*>/,
        '',
      ),
    );
    // A topic in the set: a feed token of the Personal plan.
    const path = '/v1/feeds/subjects?subjects=element/Ni,topic/T200';
    expect((await get(path)).res.status).toBe(401);
    const withTopic = await feed(`${path}&token=${tokens.personal}`);
    const t200 = (await json('/v1/subjects/topic/T200/changes', keys.personal)).changes;
    expect(withTopic.parsed.items.map((i) => i.id)).toEqual(
      expect.arrayContaining([...ni, ...t200].map(idOf)),
    );
  });

  it("a topic's feed takes a feed token of its plan: 401 without, 403 below it, 200 with", async () => {
    const path = '/v1/feeds/subjects/topic/T200';
    const none = await get(path);
    expect(none.res.status).toBe(401);
    expect(none.res.headers.get('content-type')).toBe('application/problem+json');
    expect(JSON.parse(none.text)).toMatchObject({
      code: 'authentication_required',
      required_plan: 'personal',
    });
    expect(JSON.parse(none.text).detail).toContain('token=<FEED_TOKEN>');
    const low = await get(`${path}?token=${tokens.free}`);
    expect([low.res.status, JSON.parse(low.text).code]).toEqual([403, 'plan_required']);
    const { parsed } = await feed(`${path}?token=${tokens.personal}`);
    const changes = (await json('/v1/subjects/topic/T200/changes', keys.personal)).changes;
    await expectEntries(parsed.items, changes);
    // Answered as the token's plan: HRI shown, as to a Personal key.
    expect(changes.some((c) => c.hri.after !== null)).toBe(true);
    expect(parsed.items.some((i) => i.description?.includes('>HRI<'))).toBe(true);
    // A plan raised is seen at once by the same token.
    await state.setPlan('free@example.org', 'personal');
    try {
      expect((await get(`${path}?token=${tokens.free}`)).res.status).toBe(200);
    } finally {
      await state.setPlan('free@example.org', 'free');
    }
  });

  it('a feed is a cached read: the same bytes and ETag, a hit the second time, 304 on If-None-Match', async () => {
    const path = `/v1/feeds/subjects/topic/T400?token=${tokens.personal}`;
    const first = await get(path);
    const second = await get(path);
    expect(second.text).toBe(first.text);
    expect(second.res.headers.get('server-timing')).toContain('cache;desc=hit');
    const etag = second.res.headers.get('etag')!;
    expect(etag).toBe(first.res.headers.get('etag'));
    expect(second.res.headers.get('cache-control')).toBe('private, max-age=300');
    const revalidated = await get(path, { 'if-none-match': etag });
    expect(revalidated.res.status).toBe(304);
    expect((await get('/v1/feeds/elements/Fe')).res.headers.get('cache-control')).toBe('public, max-age=300');
  });

  it('refuses what is not a feed token, and a feed token anywhere but a feed', async () => {
    const problem = async (path: string, headers: Record<string, string> = {}) => {
      const { res, text } = await get(path, headers);
      expect(res.headers.get('content-type')).toBe('application/problem+json');
      return { status: res.status, ...(JSON.parse(text) as { code: string; detail: string }) };
    };
    // The API key is never a feed token, even on an open feed.
    const asKey = await get(`/v1/feeds/elements/Fe?token=${keys.personal}`);
    expect(asKey.res.headers.get('www-authenticate')).toMatch(/^Bearer/);
    const key = await problem(`/v1/feeds/elements/Fe?token=${keys.personal}`);
    expect(key).toMatchObject({ status: 401, code: 'invalid_feed_token' });
    expect(key.detail).toContain('never an API key');
    expect(await problem(`/v1/feeds/subjects/topic/T200?token=${keys.personal}`)).toMatchObject({
      status: 401,
      code: 'invalid_feed_token',
    });
    expect(await problem('/v1/feeds/elements/Fe?token=rif_nothere')).toMatchObject({
      status: 401,
      code: 'invalid_feed_token',
    });
    // A feed token opens no /v1 API: not as a bearer, and token= is no parameter of theirs.
    for (const path of ['/v1/elements/Fe/history', '/v1/changes?kind=element', '/v1/subjects/topic/T200'])
      expect(await problem(path, bearer(tokens.personal))).toMatchObject({
        status: 401,
        code: 'invalid_key',
      });
    // token= is read on the feeds only: elsewhere the caller has no key (401), or, with a key or
    // on an open route, token is an unknown parameter (400).
    for (const path of ['/v1/elements/Fe/history', '/v1/changes'])
      expect(await problem(`${path}?token=${tokens.personal}`)).toMatchObject({
        status: 401,
        code: 'authentication_required',
      });
    for (const [path, headers] of [
      ['/v1/elements/Fe', {}],
      ['/v1/elements/Fe/history', bearer(keys.personal)],
      ['/v1/changes', bearer(keys.personal)],
    ] as const)
      expect(await problem(`${path}?token=${tokens.personal}`, headers)).toMatchObject({
        status: 400,
        code: 'invalid_parameter',
        parameter: 'token',
      });
    expect(
      await problem(`/v1/feeds/elements/Fe?token=${tokens.personal}`, bearer(keys.personal)),
    ).toMatchObject({ status: 400, code: 'invalid_parameter' });
    // Other mistakes: problems with their codes, never a 500.
    const cases: [string, number, string][] = [
      ['/v1/feeds/elements/Xx', 404, 'unknown_symbol'],
      [`/v1/feeds/subjects/topic/T99999?token=${tokens.personal}`, 404, 'unknown_subject'],
      ['/v1/feeds/subjects?subjects=element/Fe,element/Qq', 404, 'unknown_symbol'],
      ['/v1/feeds/subjects?subjects=metal/Fe', 400, 'invalid_parameter'],
      ['/v1/feeds/subjects', 400, 'invalid_parameter'],
      [
        `/v1/feeds/subjects?subjects=${Array.from({ length: 21 }, (_, i) => `topic/T${i}`).join(',')}`,
        400,
        'invalid_parameter',
      ],
      ['/v1/feeds/subjects?subjects=element/', 400, 'invalid_parameter'],
      ['/v1/feeds/rising', 400, 'invalid_parameter'],
      ['/v1/feeds/rising?kind=metal', 400, 'invalid_parameter'],
      ['/v1/feeds/elements/Fe?colour=red', 400, 'invalid_parameter'],
      ['/v1/feeds/rising?kind=keyword', 401, 'authentication_required'],
    ];
    for (const [path, status, code] of cases)
      expect([path, (await problem(path)).status, (await problem(path)).code]).toEqual([path, status, code]);
  });

  it('a revoked feed token is refused at once, even for an answer the cache holds', async () => {
    const { token, prefix } = await state.createFeedToken(accounts.personal);
    const path = `/v1/feeds/subjects/topic/T200?token=${token}`;
    await feed(path);
    expect((await get(path)).res.headers.get('server-timing')).toContain('cache;desc=hit');
    expect(await state.revokeFeedToken(prefix, accounts.personal)).toBe(true);
    const refused = await get(path);
    expect([refused.res.status, JSON.parse(refused.text).code]).toEqual([401, 'invalid_feed_token']);
    // The other token of the account still works.
    expect((await get(`/v1/feeds/subjects/topic/T200?token=${tokens.personal}`)).res.status).toBe(200);
  });

  it('every page a feed links answers 200, and the pages link their feeds', async () => {
    const links = new Set<string>();
    for (const path of [
      '/v1/feeds/elements/Ni',
      '/v1/feeds/rising?kind=element',
      `/v1/feeds/rising?kind=topic&token=${tokens.personal}`,
      `/v1/feeds/subjects/topic/T400?token=${tokens.personal}`,
    ]) {
      const { parsed, text } = await feed(path);
      // Every URL the feed prints: its page, its self link, its author's and its entries' links.
      for (const [, url] of text.matchAll(/(?:href|uri>)="?([^"<]+)/g))
        links.add(url!.replaceAll('&amp;', '&'));
      expect(links).toContain(parsed.url);
      expect(links).toContain(parsed.self);
      for (const item of parsed.items) expect(links).toContain(item.url);
    }
    expect(links.size).toBeGreaterThan(3);
    for (const link of links) {
      expect(link.startsWith(PUBLIC_URL)).toBe(true);
      expect([link, (await get(link.slice(PUBLIC_URL.length))).res.status]).toEqual([link, 200]);
    }
    for (const [page, href] of [
      ['/elements/Ni', `${PUBLIC_URL}/v1/feeds/elements/Ni`],
      ['/subjects/topic/T200', `${PUBLIC_URL}/v1/feeds/subjects/topic/T200`],
    ] as const) {
      const { res, text } = await get(page);
      expect(res.status).toBe(200);
      expect(text).toContain(`<link rel="alternate" type="application/atom+xml"`);
      expect(text).toContain(`href="${href}"`);
      expect(text).toMatch(new RegExp(`<a [^>]*href="${href.replace(/[.?]/g, '\\$&')}"`));
    }
  });
});

describe('ids across a rebuild and a new publication', () => {
  it('a rebuild of the same corpus gives the same feed; a new publication keeps the old entries as they were', async () => {
    const paths = ['/v1/feeds/elements/Fe', '/v1/feeds/rising?kind=element'];
    const before = new Map<string, string>();
    for (const path of paths) before.set(path, (await feed(path)).text);
    // Built again from the same corpus: the same data version, so the same feed.
    const rebuilt = await buildSnapshot(join(dataDir, 'corpus.duckdb'), snapshotDir);
    expect([rebuilt.changed, rebuilt.version]).toEqual([false, B]);
    for (const path of paths) expect((await feed(path)).text).toBe(before.get(path));
    // And the same publications made again in another folder give the same versions (a feed is
    // a function of its snapshot's bytes and PUBLIC_URL), the dates recorded beside them included.
    const elsewhere = tempDir('ri-feeds-again-');
    const again: string[] = [];
    for (const records of published) again.push(await build(elsewhere, records));
    expect(again).toEqual([A, B]);

    const C = await publish([
      ...many(5, 'Copper wires in circuits', COPPER, '2025-09-01'),
      paper('Copper wires in circuits', COPPER, '2025-11-25'),
    ]);
    // Each publication dated by its own cut-off, kept as it was when B was the newest.
    expect([await cutoffOf(B), await cutoffOf(C)]).toEqual([
      '2025-11-20T00:00:00.000Z',
      '2025-11-25T00:00:00.000Z',
    ]);
    const fe = await feed('/v1/feeds/elements/Fe');
    const old = parseFeed(before.get('/v1/feeds/elements/Fe')!).items;
    const now = fe.parsed.items;
    // C's entry first, then B's, the same id, date, title and link as before.
    expect(now[0]!.id).toBe(`tag:ri.example,2026:${C}/element/Fe`);
    const project = (i: (typeof now)[number]) => [i.id, i.updated?.toISOString(), i.title, i.url];
    expect(now.slice(1).map(project)).toEqual(old.map(project));
    await expectEntries(now, (await json('/v1/elements/Fe/changes', keys.free)).changes);
    expect(fe.parsed.updated!.getTime()).toBeGreaterThanOrEqual(
      parseFeed(before.get(paths[0]!)!).updated!.getTime(),
    );
  }, 120_000);
});
