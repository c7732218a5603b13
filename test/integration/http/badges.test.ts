import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StateStore } from '../../../src/access/state-store.js';
import { loadConfig } from '../../../src/config/config.js';
import { type RunningServer, startServer } from '../../../src/http/server.js';
import { SnapshotManager } from '../../../src/snapshot/snapshot.js';
import { emptyState } from '../../helpers/app.js';
import { firstPublication, ingestAndBuild, many, NICKEL, paper } from '../../helpers/changes-corpus.js';
import { tempDir, topic } from '../../helpers/works.js';

/**
 * The badges to embed, over the real listener (and so the fast path): a small corpus published
 * twice, a topic whose name holds every character XML escapes, and a feed token per plan. The
 * SVG is parsed by a browser's XML parser in test/e2e/web/badges.test.ts.
 */

const PUBLIC_URL = 'https://ri.example';
/** A topic name with <, &, both quotes and a control character, as OpenAlex names may hold. */
const ODD_NAME = 'Alloys <Ni & "Co"> \'oxide\'\u0007 layers';
const ODD = topic(500, ODD_NAME, 0.99);
const ODD_ID = 'T500';

let dataDir: string;
let manager: SnapshotManager;
let server: RunningServer;
let state: StateStore;
const tokens = { free: '', personal: '', professional: '' };
const keys = { personal: '' };
const accounts = { free: '', personal: '', professional: '' };
let A: string;
let B: string;

async function publish(records: Record<string, unknown>[]): Promise<string> {
  const built = await ingestAndBuild(dataDir, join(dataDir, 'snapshots'), records);
  expect(built.changed).toBe(true);
  await manager.refresh();
  return built.version;
}

/** A request as an <img> tag makes it: no header but Accept-Encoding (and what a test adds). */
async function get(path: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${server.url}${path}`, { headers: { 'accept-encoding': 'identity', ...headers } });
  return { res, text: await res.text() };
}

/** A badge fetched, with the checks every badge must pass; its title and description as written. */
async function badge(path: string, headers: Record<string, string> = {}) {
  const { res, text } = await get(path, headers);
  expect([path, res.status, res.headers.get('content-type')]).toEqual([
    path,
    200,
    'image/svg+xml; charset=utf-8',
  ]);
  expect(text).toMatch(
    /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg" width="\d+" height="\d+" viewBox="[^"]+" role="img" aria-labelledby="ri-title ri-desc">/,
  );
  expect(text.endsWith('</svg>')).toBe(true);
  // A few KB at most: an <img> in a README is fetched by every reader.
  expect(Buffer.byteLength(text)).toBeLessThan(3 * 1024);
  expect(res.headers.get('content-security-policy')).toBe("default-src 'none'");
  expect(res.headers.get('etag')).toMatch(/^W\/"/);
  const title = /<title id="ri-title">([^<]*)<\/title>/.exec(text)![1]!;
  const desc = /<desc id="ri-desc">([^<]*)<\/desc>/.exec(text)![1]!;
  return { res, text, title, desc };
}

async function problem(path: string, status: number, code: string) {
  const { res, text } = await get(path);
  expect([path, res.status, res.headers.get('content-type')]).toEqual([
    path,
    status,
    'application/problem+json',
  ]);
  const body = JSON.parse(text) as { code: string; detail: string };
  expect(body.code).toBe(code);
  return body;
}

beforeAll(async () => {
  dataDir = tempDir('ri-badges-');
  manager = new SnapshotManager(join(dataDir, 'snapshots'));
  state = await emptyState();
  for (const plan of ['free', 'personal', 'professional'] as const) {
    const account = await state.createAccount({ email: `${plan}@example.org`, plan });
    accounts[plan] = account.id;
    tokens[plan] = (await state.createFeedToken(account.id)).token;
  }
  keys.personal = (await state.createKey(accounts.personal)).key;
  A = await publish([...firstPublication(), ...many(5, 'Layered alloys', ODD, '2025-06-01')]);
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
}, 120_000);

afterAll(async () => {
  await server?.close();
  manager?.stop();
  await state?.close();
});

describe('badges', () => {
  it("an element's badge: open, its RIS and data version in its title and description", async () => {
    const element = JSON.parse((await get('/v1/elements/Ni')).text) as { ris: number; data_version: string };
    expect(element.data_version).toBe(A);
    const { title, desc, res } = await badge('/v1/badges/elements/ni.svg');
    expect(title).toBe(`Nickel (Ni): RIS ${element.ris.toFixed(1)}, data version ${A}`);
    expect(desc).toContain(`RIS ${element.ris.toFixed(1)} of 100`);
    expect(desc).toContain(`data version ${A}`);
    expect(desc).toContain(`${PUBLIC_URL}/elements/Ni`);
    expect(res.headers.get('cache-control')).toBe('public, max-age=300');
    expect(res.headers.get('ri-data-version')).toBe(A);
  });

  it('answers 304 to its ETag, from the response cache', async () => {
    const first = await badge('/v1/badges/elements/Ni.svg');
    const again = await get('/v1/badges/elements/Ni.svg');
    expect(again.res.headers.get('server-timing')).toMatch(/cache;desc=hit/);
    expect(again.text).toBe(first.text);
    const etag = first.res.headers.get('etag')!;
    const cached = await get('/v1/badges/elements/Ni.svg', { 'if-none-match': etag });
    expect([cached.res.status, cached.text]).toEqual([304, '']);
    expect(cached.res.headers.get('etag')).toBe(etag);
  });

  it('an unknown symbol or subject is the 404 problem of the JSON reads', async () => {
    const body = await problem('/v1/badges/elements/Xx.svg', 404, 'unknown_symbol');
    expect(body.detail).toBe((JSON.parse((await get('/v1/elements/Xx')).text) as { detail: string }).detail);
    await problem('/v1/badges/elements/Xx/history.svg', 401, 'authentication_required');
    await problem(`/v1/badges/elements/Xx/history.svg?token=${tokens.personal}`, 404, 'unknown_symbol');
    await problem(`/v1/badges/subjects/topic/T999.svg?token=${tokens.personal}`, 404, 'unknown_subject');
    await problem(
      `/v1/badges/subjects/topic/T999/history.svg?token=${tokens.personal}`,
      404,
      'unknown_subject',
    );
    // Without the .svg it is no badge.
    await problem('/v1/badges/elements/Ni', 404, 'not_found');
  });

  it("a subject's badge: refused below Personal (its scores' plan), its name escaped", async () => {
    const path = `/v1/badges/subjects/topic/${ODD_ID}.svg`;
    const none = await problem(path, 401, 'authentication_required');
    expect(none.detail).toContain('token=<FEED_TOKEN>');
    await problem(`${path}?token=${tokens.free}`, 403, 'plan_required');
    const { text, title, res } = await badge(`${path}?token=${tokens.personal}`);
    // Escaped for XML, the control character left out; nothing of the name is markup.
    const escaped = 'Alloys &lt;Ni &amp; &quot;Co&quot;&gt; &#39;oxide&#39; layers';
    expect(title.startsWith(`${escaped} (topic): RIS `)).toBe(true);
    expect(title).toContain(`data version ${A}`);
    expect(text).not.toContain('<Ni');
    expect(text).not.toContain('\u0007');
    expect(res.headers.get('cache-control')).toBe('private, max-age=300');
    await badge(`${path}?token=${tokens.professional}`);
    // A script may send its key in the header, as to a feed.
    await badge(path, { authorization: `Bearer ${keys.personal}` });
  });

  it('a sparkline needs a feed token of a plan that opens it, never an API key', async () => {
    const path = '/v1/badges/elements/Ni/history.svg';
    await problem(path, 401, 'authentication_required');
    // An element's yearly history is open to any key: so is its sparkline, to a free feed token.
    await badge(`${path}?token=${tokens.free}`);
    const refused = await problem(`${path}?token=${keys.personal}`, 401, 'invalid_feed_token');
    expect(refused.detail).toContain('never an API key');
    const { title, desc } = await badge(`${path}?token=${tokens.personal}`);
    const history = JSON.parse(
      (await get('/v1/elements/Ni/history', { authorization: `Bearer ${keys.personal}` })).text,
    ) as { series: { period: string; ris: number }[] };
    const first = history.series[0]!.period;
    const last = history.series[history.series.length - 1]!.period;
    expect(title).toBe(`Nickel (Ni): RIS by year, ${first}-${last}, data version ${A}`);
    for (const p of history.series) expect(desc).toContain(`${p.period} ${p.ris.toFixed(1)}`);
    await badge(`${path}?token=${tokens.professional}`);
    const subject = await badge(`/v1/badges/subjects/topic/${ODD_ID}/history.svg?token=${tokens.personal}`);
    expect(subject.title).toContain('Alloys &lt;Ni &amp;');
    await problem(
      `/v1/badges/subjects/topic/${ODD_ID}/history.svg?token=${tokens.free}`,
      403,
      'plan_required',
    );
  });

  it('a revoked token is refused at once, even for a badge the cache holds', async () => {
    const account = await state.createAccount({ email: 'revoked@example.org', plan: 'personal' });
    const { token, prefix } = await state.createFeedToken(account.id);
    const path = `/v1/badges/elements/Co/history.svg?token=${token}`;
    await badge(path);
    expect((await get(path)).res.headers.get('server-timing')).toMatch(/cache;desc=hit/);
    expect(await state.revokeFeedToken(prefix, account.id)).toBe(true);
    await problem(path, 401, 'invalid_feed_token');
  });

  it('changes with the next publication; a pinned read draws the version it names', async () => {
    const before = await badge('/v1/badges/elements/Ni.svg');
    B = await publish([
      ...many(6, 'Nickel electrodes for batteries', NICKEL, '2025-07-01'),
      paper('Nickel foam', NICKEL, '2025-11-20'),
    ]);
    expect(B).not.toBe(A);
    const after = await badge('/v1/badges/elements/Ni.svg');
    expect(after.title).toContain(`data version ${B}`);
    expect(after.res.headers.get('etag')).not.toBe(before.res.headers.get('etag'));
    // The old ETag no longer matches: the badge is drawn again.
    const stale = await get('/v1/badges/elements/Ni.svg', {
      'if-none-match': before.res.headers.get('etag')!,
    });
    expect(stale.res.status).toBe(200);
    const pinned = await badge(`/v1/badges/elements/Ni.svg?data_version=${A}`);
    expect(pinned.title).toBe(before.title);
    const line = await badge(`/v1/badges/elements/Ni/history.svg?token=${tokens.personal}`);
    expect(line.title).toContain(`data version ${B}`);
  }, 120_000);

  it('takes no other parameter', async () => {
    await problem('/v1/badges/elements/Ni.svg?style=flat', 400, 'invalid_parameter');
  });
});
