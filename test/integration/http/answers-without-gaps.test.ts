import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer } from '../../helpers/app.js';
import { servedSample } from '../../helpers/x402.js';

/** Issue 12, point 4: answers a client does not have to patch up (real HTTP on the bundled sample). */
// biome-ignore lint/suspicious/noExplicitAny: answers are read loosely; each test asserts the shape it needs
type Json = Record<string, any>;
let served: Awaited<ReturnType<typeof servedSample>>;
let enterprise: Awaited<ReturnType<typeof servedSample>>;
let keys: Record<'free' | 'personal' | 'professional' | 'enterprise', ReturnType<typeof bearer>>;

beforeAll(async () => {
  served = await servedSample();
  enterprise = await servedSample({ EDITION: 'enterprise' });
  const k = served.ctx.keys;
  keys = {
    free: bearer(k.free),
    personal: bearer(k.personal),
    professional: bearer(k.professional),
    enterprise: bearer(enterprise.ctx.keys.enterprise),
  };
}, 60_000);
afterAll(async () => {
  await served?.close();
  await enterprise?.close();
});

async function get(path: string, init: RequestInit = {}, base = served.server.base) {
  const res = await fetch(`${base}${path}`, init);
  const text = await res.text();
  return {
    res,
    body: (text && res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text) as Json,
  };
}

/** The period after `p`, computed independently of the service: 2024 -> 2025, 2024-12 -> 2025-01, days. */
function nextPeriod(p: string): string {
  if (/^\d{4}$/.test(p)) return String(Number(p) + 1);
  if (/^\d{4}-\d{2}$/.test(p)) {
    const [y, m] = p.split('-').map(Number) as [number, number];
    return m === 12 ? `${y + 1}-01` : `${y}-${String(m + 1).padStart(2, '0')}`;
  }
  const d = new Date(`${p}T12:00:00Z`);
  d.setUTCDate(d.getUTCDate() + 1);
  return d.toISOString().slice(0, 10);
}

describe('history series are contiguous', () => {
  it.each([
    ['yearly', 'free', 4],
    ['monthly', 'personal', 7],
    ['daily', 'professional', 10],
  ] as const)(
    'element %s history: every period from the first paper to the cut-off, zeros included',
    async (resolution, plan, width) => {
      const { res, body } = await get(`/v1/elements/Fe/history?resolution=${resolution}`, keys[plan]);
      expect(res.status).toBe(200);
      const series = body.series as {
        period: string;
        ri: number;
        ris: number;
        hri: number | null;
        papers: number;
      }[];
      const cutoff = /cut-off (\d{4}-\d{2}-\d{2})/.exec(body.notes.data)![1]!;
      expect(series[0]!.papers).toBeGreaterThan(0);
      expect(series[series.length - 1]!.period).toBe(cutoff.slice(0, width));
      for (let i = 1; i < series.length; i++)
        expect(series[i]!.period).toBe(nextPeriod(series[i - 1]!.period));
      const gaps = series.filter((p) => p.papers === 0);
      expect(gaps.length).toBeGreaterThan(0);
      for (const p of gaps) expect(p).toMatchObject({ ri: 0, ris: 0 });
      expect(body.notes.history).toMatch(/contiguous/);
    },
  );

  it('subject history is contiguous too', async () => {
    const search = await get('/v1/subjects/search?q=battery', keys.personal);
    const topic = (search.body.results as Json[]).find((r) => r.subject_type === 'topic')!.subject_id;
    const { res, body } = await get(`/v1/subjects/topic/${topic}/history?resolution=monthly`, keys.personal);
    expect(res.status).toBe(200);
    const periods = (body.series as Json[]).map((p) => p.period as string);
    for (let i = 1; i < periods.length; i++) expect(periods[i]).toBe(nextPeriod(periods[i - 1]!));
    expect((body.series as Json[]).some((p) => p.papers === 0)).toBe(true);
  });
});

describe('lab', () => {
  const quote = (q: string) => get(`/v1/lab/quote?q=${encodeURIComponent(q)}`, keys.professional);
  const terms = (q: string) => q.split(' ').filter((t) => /^[A-Z]/.test(t)).length;

  it.each([
    ['Au Ag Pt Pd Ir', 2],
    ['Au Ag Pt Pd Ir Dy', 3],
  ])(
    '%s matches nothing: broader drops %i clauses, no fewer, and each broader query matches what it says',
    async (q, dropped) => {
      const { body } = await quote(q);
      expect(body.matches).toBe(0);
      const broader = body.broader as { query: string; matches: number }[];
      expect(broader.length).toBeGreaterThan(0);
      for (const b of broader) {
        expect(terms(b.query)).toBe(terms(q) - dropped);
        expect((await quote(b.query)).body.matches).toBe(b.matches);
      }
      // Nearest first: no query with fewer clauses dropped matches anything.
      const words = q.split(' ');
      for (let i = 0; i < words.length; i++) {
        expect((await quote(words.filter((_, j) => j !== i).join(' '))).body.matches).toBe(0);
      }
    },
  );

  it('a narrow query with nothing broader to offer says why in notes', async () => {
    const { body } = await quote('Dy');
    expect(body.matches).toBeGreaterThan(0);
    expect(body.matches).toBeLessThan(20);
    expect(body.broader).toEqual([]);
    expect(body.notes.empty).toMatch(/broader is empty: no query made by dropping up to 3/);
    expect((await quote('Au Ag Pt Pd Ir')).body.notes.empty).not.toMatch(/broader is empty/);
  });

  it('reordered OR members give the same canonical form, terms and quote_id', async () => {
    const a = (await quote('(Ni OR Co OR "oxygen evolution") Fe')).body;
    const b = (await quote('("Oxygen  Evolution" OR Co OR Ni) Fe')).body;
    expect(a.query).toBe(b.query);
    expect(a.quote_id).toBe(b.quote_id);
    expect(a.terms).toEqual(b.terms);
    expect(a.matches).toBe(b.matches);
  });
});

describe('element papers keyword filter', () => {
  it('an unknown keyword is 404 unknown_subject with suggestions', async () => {
    const { res, body } = await get('/v1/elements/Fe/papers?keyword=oxygen-evolutio', keys.personal);
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    expect(body).toMatchObject({ code: 'unknown_subject', parameter: 'keyword' });
    expect(body.suggestions.length).toBeGreaterThan(0);
  });

  it('a known keyword with no paper in the top 100 says so in notes', async () => {
    const fe = (await get('/v1/elements/Fe/papers?limit=100', keys.personal)).body;
    const feKeywords = new Set((fe.papers as Json[]).flatMap((p) => p.keywords as string[]));
    const au = (await get('/v1/elements/Au/papers?limit=100', keys.personal)).body;
    const keyword = (au.papers as Json[])
      .flatMap((p) => p.keywords as string[])
      .find((k) => !feKeywords.has(k))!;
    expect((await get(`/v1/subjects/keyword/${keyword}`, keys.personal)).res.status).toBe(200);
    const { res, body } = await get(`/v1/elements/Fe/papers?keyword=${keyword}`, keys.personal);
    expect(res.status).toBe(200);
    expect(body.papers).toEqual([]);
    expect(body.keyword).toBe(keyword);
    expect(body.notes.empty).toMatch(
      /papers is empty: no paper among the 100 ranked papers of Fe has the keyword/,
    );
  });

  it('a keyword that matches keeps the notes free of an empty-list note', async () => {
    const fe = (await get('/v1/elements/Fe/papers?limit=100', keys.personal)).body;
    const keyword = (fe.papers as Json[]).flatMap((p) => p.keywords as string[])[0]!;
    const { body } = await get(`/v1/elements/Fe/papers?keyword=${keyword}`, keys.personal);
    expect(body.papers.length).toBeGreaterThan(0);
    expect(body.notes.empty).toBeUndefined();
  });
});

describe('research', () => {
  it('an empty lens says why in notes', async () => {
    const { res, body } = await get('/v1/research?q=helium', keys.personal);
    expect(res.status).toBe(200);
    expect(body.lists.foundational).toEqual([]);
    expect(body.lists.newest).toEqual([]);
    expect(body.lists.now.length).toBeGreaterThan(0);
    expect(body.notes.empty).toMatch(
      /foundational is empty: .* carry no references to papers in this corpus/,
    );
    expect(body.notes.empty).toMatch(/newest is empty: none of the \d+ papers/);
    expect(body.notes.empty).not.toMatch(/now is empty/);
  });
});

describe('a wrong method on a known path', () => {
  it.each([
    ['POST', '/v1/elements', 'GET, HEAD'],
    ['DELETE', '/v1/elements/Fe/history', 'GET, HEAD'],
    ['PUT', '/v1/lab/quote', 'GET, HEAD, POST'],
  ])('%s %s is 405 problem+json with Allow: %s', async (method, path, allow) => {
    const res = await fetch(`${served.server.base}${path}`, { method, ...keys.professional });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe(allow);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    expect(await res.json()).toMatchObject({ status: 405, code: 'method_not_allowed' });
  });

  it('an unknown path stays 404, and /mcp keeps its own 405', async () => {
    expect((await fetch(`${served.server.base}/v1/nothing-here`, { method: 'POST' })).status).toBe(404);
    const mcp = await fetch(`${served.server.base}/mcp`);
    expect(mcp.status).toBe(405);
    expect(mcp.headers.get('allow')).toBe('POST');
  });
});

describe('the enterprise edition', () => {
  it("notes speak only of that edition's plan", async () => {
    for (const [path, init] of [
      ['/v1/elements', {}],
      ['/v1/elements/Fe', {}],
      ['/v1/elements/Fe/history', bearer(enterprise.ctx.keys.free)],
    ] as const) {
      const { res, body } = await get(path, init, enterprise.server.base);
      expect(res.status).toBe(200);
      expect(body.notes.hri).toMatch(/Enterprise plan/);
      expect(JSON.stringify(body.notes)).not.toMatch(/Personal|Professional/);
    }
    const { body } = await get('/v1/elements/Fe', {});
    expect(body.notes.hri).toMatch(/Personal plan/);
  });
});
