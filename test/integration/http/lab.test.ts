import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readPointer, snapshotFile } from '../../../src/snapshot/folder.js';
import { publishSnapshot } from '../../../src/snapshot-build/publish.js';
import { bearer, sampleApp } from '../../helpers/app.js';

/**
 * The lab over real HTTP (app.request) on the bundled real sample. Expected match counts are
 * computed independently, with SQL over the snapshot's papers table (headline elements and topics
 * as stored), not through the lab's own postings.
 */
let ctx: Awaited<ReturnType<typeof sampleApp>>;
let db: Database.Database;
let clock = Date.parse('2026-11-23T12:00:00Z');
const now = () => new Date(clock);

beforeAll(async () => {
  ctx = await sampleApp({}, { now });
  db = new Database(snapshotFile(join(ctx.dataDir, 'snapshots'), ctx.version), { readonly: true });
  // The papers with the numbers that move with the corpus (whole-corpus columns since schema 4),
  // so the checks below are plain SQL over one table.
  const column = <T>(
    name: string,
    Type: { new (b: ArrayBuffer, o: number, n: number): T; BYTES_PER_ELEMENT: number },
  ) => {
    const blob = db.prepare('SELECT data FROM paper_columns WHERE name = ?').pluck().get(name) as Buffer;
    const copy = new Uint8Array(blob).buffer;
    return new Type(copy, 0, blob.length / Type.BYTES_PER_ELEMENT);
  };
  const impact = column('impact_score', Float64Array);
  const cluster = column('cluster', Int32Array);
  db.exec('CREATE TEMP TABLE scores (ordinal INTEGER PRIMARY KEY, impact_score REAL, cluster INTEGER)');
  const score = db.prepare('INSERT INTO temp.scores VALUES (?, ?, ?)');
  db.transaction(() => {
    for (let p = 0; p < impact.length; p++)
      score.run(p, Number.isNaN(impact[p]!) ? null : impact[p], cluster[p] === -1 ? null : cluster[p]);
  })();
});
afterAll(async () => {
  db.close();
  await ctx.close();
});

const has = (column: 'elements' | 'topics', value: string) => `(',' || ${column} || ',') LIKE '%,${value},%'`;
const count = (where: string) =>
  db
    .prepare(`SELECT count(*) FROM papers JOIN temp.scores USING (ordinal) WHERE ${where}`)
    .pluck()
    .get() as number;

type Quote = {
  quote_id: string;
  query: string;
  matches: number;
  terms: {
    term: string;
    role: string;
    subjects: { subject_type: string; subject_id: string; name: string }[];
    expansion?: { matched: number; truncated: boolean };
  }[];
  years: { year: number | null; papers: number }[];
  communities: { topic_id: string | null; papers: number }[];
  sample: { used: boolean; size: number };
  deliverables: Record<string, { papers: number; price: { usd: number }; run_price: { usd: number } }>;
  not_offered: { depth: string; papers: number; reason: string }[];
  licence: unknown;
  ignored: { term: string; position: number; reason: string; suggestions: string[] }[];
  broader: { query: string; matches: number }[];
  price: { usd: number };
  data_version: string;
  expires_at: string;
  signature: string;
  canonical_url: string;
  notes: { lab: string };
};

const pro = () => bearer(ctx.keys.professional);
async function quote(q: string): Promise<Quote> {
  const res = await ctx.app.request(`/v1/lab/quote?q=${encodeURIComponent(q)}`, pro());
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as Quote;
}
const post = (path: string, body: unknown, init: { headers?: Record<string, string> } = pro()) =>
  ctx.app.request(path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...init.headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });

describe('lab quote: every form of the filter language, counted against the papers table', () => {
  it.each([
    ['Ni', has('elements', 'Ni')],
    ['+Ni', has('elements', 'Ni')],
    ['nickel', has('elements', 'Ni')],
    ['Ni Fe', `${has('elements', 'Ni')} AND ${has('elements', 'Fe')}`],
    ['+Ni +iron', `${has('elements', 'Ni')} AND ${has('elements', 'Fe')}`],
    ['Ni -Fe', `${has('elements', 'Ni')} AND NOT ${has('elements', 'Fe')}`],
    ['(Ni OR Co)', `(${has('elements', 'Ni')} OR ${has('elements', 'Co')})`],
    [
      'O (Ni OR Co) -Fe',
      `${has('elements', 'O')} AND (${has('elements', 'Ni')} OR ${has('elements', 'Co')}) AND NOT ${has('elements', 'Fe')}`,
    ],
    ['"Electrocatalysts for Energy Conversion"', has('topics', 'T10030')],
    [
      'Cu "electrocatalysts for energy conversion"',
      `${has('elements', 'Cu')} AND ${has('topics', 'T10030')}`,
    ],
    ['Cu year:2025', `${has('elements', 'Cu')} AND year = 2025`],
    ['Cu year:2019..2024', `${has('elements', 'Cu')} AND year BETWEEN 2019 AND 2024`],
    ['Cu year:2020..', `${has('elements', 'Cu')} AND year >= 2020`],
    ['Cu year:..2019', `${has('elements', 'Cu')} AND year <= 2019 AND year IS NOT NULL`],
  ])('%s', async (q, where) => {
    const body = await quote(q);
    expect(body.matches).toBe(count(where));
    expect(body.matches).toBeGreaterThan(0);
    if (!body.sample.used) expect(body.years.reduce((s, y) => s + y.papers, 0)).toBe(body.matches);
  });

  it('expands word* over topic names (at most 25, reported) and counts their union', async () => {
    const body = await quote('perovsk*');
    const term = body.terms[0]!;
    expect(term.expansion).toEqual({ matched: term.subjects.length, truncated: false });
    expect(term.subjects.length).toBeGreaterThan(0);
    for (const s of term.subjects) expect(s.name.toLowerCase()).toMatch(/(^|[^a-z])perovsk/);
    expect(body.matches).toBe(count(term.subjects.map((s) => has('topics', s.subject_id)).join(' OR ')));

    const wide = await quote('mat*'); // materials, mathematical, matrix...: more than 25 names
    expect(wide.terms[0]!.subjects).toHaveLength(25);
    expect(wide.terms[0]!.expansion).toMatchObject({ truncated: true });
    expect(wide.terms[0]!.expansion!.matched).toBeGreaterThan(25);
  });

  it('echoes the canonical query; the same query on the same data gives the same numbers, prices and quote_id', async () => {
    const a = await quote('+Ni   Fe  year:2024');
    clock += 5_000;
    const b = await quote('Ni +Fe year:2024..2024');
    expect(a.query).toBe('Fe Ni year:2024');
    expect(b.query).toBe(a.query);
    expect(b.quote_id).toBe(a.quote_id);
    for (const k of [
      'matches',
      'years',
      'communities',
      'deliverables',
      'not_offered',
      'broader',
      'ignored',
      'data_version',
    ] as const)
      expect(b[k]).toEqual(a[k]);
    expect(b.expires_at).not.toBe(a.expires_at);
    expect((await quote('Ni Co')).quote_id).not.toBe(a.quote_id);
  });

  it('prices each deliverable (binding), with what a run charges after the quote', async () => {
    const body = await quote('Cu "electrocatalysts for energy conversion"');
    expect(body.price.usd).toBe(0.01);
    expect(body.deliverables.papers_20).toMatchObject({
      papers: 20,
      price: { usd: 0.05 },
      run_price: { usd: 0.04 },
    });
    expect(body.deliverables.papers_100).toMatchObject({
      papers: Math.min(100, body.matches),
      price: { usd: 0.2 },
      run_price: { usd: 0.19 },
    });
    expect(Date.parse(body.expires_at) - clock).toBe(15 * 60 * 1000);
    expect(body.data_version).toBe(ctx.version);
    expect(body.signature).toMatch(/^[\w-]{43}$/);
    expect(body.notes.lab).toMatch(/headline/);
  });

  it('lists unknown terms under ignored (with the reason and suggestions) and matches on the rest', async () => {
    const body = await quote('Ni zzyzx co');
    expect(body.ignored.map((i) => i.term)).toEqual(['zzyzx', 'co']);
    expect(body.ignored[0]).toMatchObject({ position: 3 });
    expect(body.ignored[1]!.reason).toMatch(/case-sensitive: Co/);
    expect(body.ignored[1]!.suggestions).toContain('Co');
    expect(body.matches).toBe(count(has('elements', 'Ni')));
  });

  it.each([
    ['Fe Ni', 'Ni Fe'],
    ['Fe -Pt -Au', '-Au Fe -Pt'],
    ['(Ni OR Co) (Pt OR Pd) Fe', '(Pd OR Pt) Fe (Co OR Ni)'],
    ['Fe Ni -O -S (Co OR Mn) year:2020..', 'year:2020.. -S (Mn OR Co) -O Ni Fe'],
  ])(
    'gives %j and %j, the same filter written in another order, one query and one quote_id',
    async (x, y) => {
      const [a, b] = [await quote(x), await quote(y)];
      expect(b.query).toBe(a.query);
      expect(b.quote_id).toBe(a.quote_id);
      expect(b.matches).toBe(a.matches);
    },
  );

  it('offers broader queries with their counts when the match is empty or narrow, and no deliverable when empty', async () => {
    const body = await quote('Ni Fe year:1900');
    expect(body.matches).toBe(0);
    expect(body.deliverables).toEqual({});
    expect(body.not_offered.map((n) => n.reason)).toEqual([
      'nothing matches: see broader',
      'nothing matches: see broader',
    ]);
    expect(body.broader[0]).toEqual({
      query: 'Fe Ni',
      matches: count(`${has('elements', 'Ni')} AND ${has('elements', 'Fe')}`),
    });
    for (const b of body.broader) expect(b.matches).toBeGreaterThan(0);
    const wide = await quote('Ni');
    expect(wide.matches).toBeGreaterThan(20);
    expect(wide.broader).toEqual([]);
  });

  it('counts years and communities on a fixed sample above 2,000 matches, and flags it', async () => {
    const big = await quote('O');
    expect(big.matches).toBeGreaterThan(2000);
    expect(big.sample).toEqual({ used: true, size: 2000 });
    const again = await quote('O');
    expect(again.years).toEqual(big.years);
    expect(again.communities).toEqual(big.communities);
    const total = big.years.reduce((s, y) => s + y.papers, 0);
    expect(Math.abs(total - big.matches)).toBeLessThan(big.years.length * 5); // scaled estimates
    const small = await quote('Ni Fe');
    expect(small.sample).toEqual({ used: false, size: small.matches });
    const byCommunity = small.communities.find((c) => c.topic_id === 'T10030')!;
    expect(byCommunity.papers).toBe(
      count(`${has('elements', 'Ni')} AND ${has('elements', 'Fe')} AND cluster = 10030`),
    );
  });

  it('POST takes {query} or {markdown} with a ```query block, and gives the same quote', async () => {
    const byGet = await quote('Ni Fe -O');
    const byQuery = (await (await post('/v1/lab/quote', { query: 'Ni Fe -O' })).json()) as Quote;
    const markdown = 'Find me papers on NiFe catalysts:\n\n```query\nNi Fe -O\n```\n\nThanks.';
    const byMarkdown = (await (await post('/v1/lab/quote', { markdown })).json()) as Quote;
    expect(byQuery.quote_id).toBe(byGet.quote_id);
    expect(byMarkdown.quote_id).toBe(byGet.quote_id);
    expect(byMarkdown.matches).toBe(byGet.matches);
  });

  it('refuses markdown with two ```query blocks, naming the parameter, rather than drop one', async () => {
    const markdown = 'Nickel first:\n\n```query\nNi Fe\n```\n\nand then:\n\n```query\nCo -Pt\n```\n';
    const res = await post('/v1/lab/quote', { markdown });
    expect(res.status).toBe(400);
    const problem = (await res.json()) as Record<string, unknown>;
    expect(problem).toMatchObject({ code: 'invalid_parameter', parameter: 'markdown', blocks: 2 });
    expect(problem.position).toBe(markdown.indexOf('```query', markdown.indexOf('and then')));
    // One block among other fenced code is still the filter.
    const one = await post('/v1/lab/quote', { markdown: '```python\nx = 1\n```\n```query\nNi Fe\n```' });
    expect(((await one.json()) as Quote).query).toBe('Fe Ni');
  });
});

describe('lab quote: refusals', () => {
  it.each([
    ['Ni (Fe OR', 'unclosed_group', 3],
    ['Ni year:2030..2020', 'reversed_year_range', 3],
    ['-Fe', 'no_required_term', 0],
    ['ab*', 'short_wildcard', 0],
  ])('%s -> 400 unusable_query (%s) at its position, with a suggested fix', async (q, reason, position) => {
    const res = await ctx.app.request(`/v1/lab/quote?q=${encodeURIComponent(q)}`, pro());
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ code: 'unusable_query', reason, position });
    expect(body.suggestion).toEqual(expect.any(String));
  });

  it('a query with no known required term is unusable, and says which terms it did not know', async () => {
    const res = await ctx.app.request('/v1/lab/quote?q=zzyzx%20-Fe', pro());
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({
      code: 'unusable_query',
      reason: 'no_known_term',
      ignored: [{ term: 'zzyzx', position: 0 }],
    });
  });

  it.each([
    [{}, 'query'],
    [{ query: 'Ni', markdown: '```query\nNi\n```' }, 'markdown'],
    [{ query: 'Ni', extra: 1 }, 'extra'],
  ])('POST body %j -> 400 invalid_parameter naming %s', async (body, parameter) => {
    const res = await post('/v1/lab/quote', body);
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ code: 'invalid_parameter', parameter });
  });

  it('POST refuses any parameter in its URL, naming it (none is ignored): the body alone is read', async () => {
    const q = await quote('Ni');
    const cases: [string, unknown, string][] = [
      ['/v1/lab/quote?q=Fe', { query: 'Ni' }, 'q'],
      ['/v1/lab/quote?bogus=1', { query: 'Ni' }, 'bogus'],
      [`/v1/lab/quote?data_version=${q.data_version}`, { query: 'Ni' }, 'data_version'],
      ['/v1/lab/run?depth=papers_100', { quote_id: q.quote_id, depth: 'papers_20' }, 'depth'],
      ['/v1/lab/run?bogus=1', { quote_id: q.quote_id, depth: 'papers_20' }, 'bogus'],
    ];
    for (const [path, body, parameter] of cases) {
      const res = await post(path, body);
      expect([path, res.status]).toEqual([path, 400]);
      expect(await res.json()).toMatchObject({ code: 'invalid_parameter', parameter });
    }
    // Without them, the same bodies are answered.
    expect((await post('/v1/lab/quote', { query: 'Ni' })).status).toBe(200);
    expect((await post('/v1/lab/run', { quote_id: q.quote_id, depth: 'papers_20' })).status).toBe(200);
  });

  it('POST: markdown without a query block is unusable; a body that is not JSON or too large is refused', async () => {
    const noBlock = await post('/v1/lab/quote', { markdown: 'just Ni and Fe' });
    expect(noBlock.status).toBe(400);
    expect(await noBlock.json()).toMatchObject({ code: 'unusable_query' });
    const broken = await post('/v1/lab/quote', '{"query": ');
    expect(broken.status).toBe(400);
    expect(await broken.json()).toMatchObject({ code: 'invalid_parameter', parameter: 'body' });
    const huge = await post('/v1/lab/quote', { markdown: 'x'.repeat(200_000) });
    expect(huge.status).toBe(413);
    expect(await huge.json()).toMatchObject({ code: 'payload_too_large' });
  });

  it('property: any query string gives a quote or a 400 problem, never a 5xx', async () => {
    const piece = fc.constantFrom(
      'Ni',
      'Fe',
      'iron',
      'O',
      'co',
      '"',
      '(',
      ')',
      ' OR ',
      ' ',
      '-',
      '+',
      '*',
      'perov',
      'year:',
      '2024',
      '..',
      'zz',
      'é',
    );
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.string({ maxLength: 40 }),
          fc.array(piece, { maxLength: 12 }).map((xs) => xs.join('')),
        ),
        async (q) => {
          const res = await ctx.app.request(`/v1/lab/quote?q=${encodeURIComponent(q)}`, pro());
          expect([200, 400]).toContain(res.status);
          if (res.status === 400)
            expect(((await res.json()) as { code: string }).code).toMatch(
              /^(unusable_query|invalid_parameter)$/,
            );
        },
      ),
      { numRuns: 150 },
    );
  });
});

describe('lab run', () => {
  type Run = {
    quote_id: string;
    depth: string;
    matches: number;
    price: { usd: number };
    papers: {
      rank: number;
      doi: string | null;
      impact_score: number | null;
      citations: number | null;
      elements: string[];
      ris_contribution: number;
    }[];
  };
  const run = (id: string, depth: string) =>
    ctx.app.request(`/v1/lab/run?quote_id=${encodeURIComponent(id)}&depth=${depth}`, pro());

  it('delivers the top papers matching the quoted query, ranked by impact, at the quoted run price', async () => {
    const q = await quote('Ni Fe');
    const res = await run(q.quote_id, 'papers_20');
    expect(res.status).toBe(200);
    const body = (await res.json()) as Run;
    expect(body).toMatchObject({
      quote_id: q.quote_id,
      depth: 'papers_20',
      matches: q.matches,
      price: { usd: 0.04 },
    });
    expect(body.papers.map((p) => p.rank)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    for (const p of body.papers) expect(p.elements).toEqual(expect.arrayContaining(['Ni', 'Fe']));
    // Ranked by impact: papers with known citations first, by impact_score, then citations.
    const known = body.papers.filter((p) => p.citations !== null);
    for (let i = 1; i < known.length; i++) {
      const [a, b] = [known[i - 1]!, known[i]!];
      expect((a.impact_score ?? -1) >= (b.impact_score ?? -1)).toBe(true);
    }
    // The top paper is the best-ranked matching paper of the whole table.
    const best = db
      .prepare(
        `SELECT doi FROM papers JOIN temp.scores USING (ordinal) WHERE ${has('elements', 'Ni')} AND ${has('elements', 'Fe')} AND citations IS NOT NULL ORDER BY impact_score DESC, citations DESC, doi LIMIT 1`,
      )
      .pluck()
      .get();
    if (known.length > 0) expect(body.papers[0]!.doi).toBe(best);
  });

  it('papers_100 delivers every match when fewer than 100 match; GET by id and POST with the whole quote agree', async () => {
    const q = await quote('Cu "electrocatalysts for energy conversion"');
    const byId = (await (await run(q.quote_id, 'papers_100')).json()) as Run;
    expect(byId.papers).toHaveLength(Math.min(100, q.matches));
    const byQuote = await post('/v1/lab/run', { quote: q, depth: 'papers_100' });
    expect(byQuote.status).toBe(200);
    expect(((await byQuote.json()) as Run).papers.map((p) => p.doi)).toEqual(byId.papers.map((p) => p.doi));
    const byPostId = await post('/v1/lab/run', { quote_id: q.quote_id, depth: 'papers_100' });
    expect(((await byPostId.json()) as Run).papers).toHaveLength(byId.papers.length);
    const share = byId.papers.reduce((s, p) => s + p.ris_contribution, 0);
    expect(share).toBeGreaterThan(0);
    expect(share).toBeLessThanOrEqual(1 + 1e-9);
  });

  it('refuses an edited quote with 400 quote_edited', async () => {
    const q = await quote('Ni Fe');
    for (const edited of [
      {
        ...q,
        deliverables: {
          ...q.deliverables,
          papers_100: { ...q.deliverables.papers_100!, run_price: { usd: 0.001, currency: 'USD' } },
        },
      },
      { ...q, query: 'Ni' },
      { ...q, expires_at: new Date(clock + 86_400_000).toISOString() },
      { ...q, signature: undefined },
    ]) {
      const res = await post('/v1/lab/run', { quote: edited, depth: 'papers_100' });
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ code: 'quote_edited' });
    }
    // The envelope (attribution and notes) is not part of what the quote binds.
    const res = await post('/v1/lab/run', { quote: { ...q, notes: {} }, depth: 'papers_20' });
    expect(res.status).toBe(200);
  });

  it('refuses an expired quote with 410 quote_expired, by id and by body', async () => {
    const q = await quote('Co');
    clock += 15 * 60 * 1000 + 1;
    const byId = await run(q.quote_id, 'papers_20');
    expect(byId.status).toBe(410);
    expect(await byId.json()).toMatchObject({ code: 'quote_expired', expired_at: q.expires_at });
    const byBody = await post('/v1/lab/run', { quote: q, depth: 'papers_20' });
    expect(byBody.status).toBe(410);
    // A new quote for the same query binds again.
    expect((await run((await quote('Co')).quote_id, 'papers_20')).status).toBe(200);
  });

  it('refuses an unknown quote_id (404), a bad depth (400) and a depth the quote does not offer', async () => {
    const unknown = await run('q_doesnotexist', 'papers_20');
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ code: 'unknown_quote', parameter: 'quote_id' });
    const q = await quote('Ni');
    const depth = await run(q.quote_id, 'papers_50');
    expect(depth.status).toBe(400);
    expect(await depth.json()).toMatchObject({ code: 'invalid_parameter', parameter: 'depth' });
    const empty = await quote('Ni Fe year:1900');
    const none = await run(empty.quote_id, 'papers_20');
    expect(none.status).toBe(400);
    expect(await none.json()).toMatchObject({ code: 'depth_not_offered', parameter: 'depth', offered: [] });
    const both = await post('/v1/lab/run', { quote_id: q.quote_id, quote: q, depth: 'papers_20' });
    expect(both.status).toBe(400);
  });
});

describe('lab access', () => {
  it.each([
    ['none', 401, 'authentication_required'],
    ['free', 403, 'plan_required'],
    ['personal', 403, 'plan_required'],
  ] as const)('with %s key -> %i %s (quote and run)', async (caller, status, code) => {
    const init = caller === 'none' ? {} : bearer(ctx.keys[caller]);
    for (const path of ['/v1/lab/quote?q=Ni', '/v1/lab/run?quote_id=q_x&depth=papers_20']) {
      const res = await ctx.app.request(path, init);
      expect(res.status).toBe(status);
      const body = (await res.json()) as Record<string, unknown>;
      expect(body.code).toBe(code);
      if (status === 403) expect(body.required_plan).toBe('professional');
    }
    const res = await post(
      '/v1/lab/quote',
      { query: 'Ni' },
      caller === 'none' ? {} : bearer(ctx.keys[caller]),
    );
    expect(res.status).toBe(status);
  });

  it('the quote is never served from the response cache (its expiry moves)', async () => {
    const a = await ctx.app.request('/v1/lab/quote?q=Zn', pro());
    clock += 1000;
    const b = await ctx.app.request('/v1/lab/quote?q=Zn', pro());
    expect(a.headers.get('cache-control')).toBe('no-store');
    expect(((await b.json()) as Quote).expires_at).not.toBe(((await a.json()) as Quote).expires_at);
  });

  it('is absent (404) in the enterprise edition', async () => {
    const ent = await sampleApp({ EDITION: 'enterprise' });
    try {
      for (const path of ['/v1/lab/quote?q=Ni', '/v1/lab/run?quote_id=q_x&depth=papers_20']) {
        const res = await ent.app.request(path, bearer(ent.keys.enterprise));
        expect(res.status).toBe(404);
        expect(((await res.json()) as { code: string }).code).toBe('not_found');
      }
    } finally {
      await ent.close();
    }
  });
});

describe('lab run on republished data', () => {
  it('refuses a quote issued before the data was republished with 409 quote_stale', async () => {
    const q = await quote('Ni Fe');
    // Publish a new snapshot (the same content with one more meta row: another data_version).
    const dir = join(ctx.dataDir, 'snapshots');
    const tmp = join(dir, '.republish.sqlite');
    copyFileSync(snapshotFile(dir, readPointer(dir, 'CURRENT')!), tmp);
    const w = new Database(tmp);
    w.prepare("INSERT INTO meta (key, value) VALUES ('republished', 'yes')").run();
    w.close();
    const published = await publishSnapshot(dir, tmp);
    expect(published.version).not.toBe(q.data_version);
    await ctx.snapshots.refresh();
    for (const res of [
      await ctx.app.request(`/v1/lab/run?quote_id=${q.quote_id}&depth=papers_20`, pro()),
      await post('/v1/lab/run', { quote: q, depth: 'papers_20' }),
    ]) {
      expect(res.status).toBe(409);
      expect(await res.json()).toMatchObject({
        code: 'quote_stale',
        quote_data_version: q.data_version,
        data_version: published.version,
      });
    }
    const fresh = await quote('Ni Fe');
    expect(fresh.data_version).toBe(published.version);
    expect(fresh.quote_id).not.toBe(q.quote_id);
    expect(
      (await ctx.app.request(`/v1/lab/run?quote_id=${fresh.quote_id}&depth=papers_20`, pro())).status,
    ).toBe(200);
  });
});
