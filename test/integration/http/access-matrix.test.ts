import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATIONS } from '../../../src/access/policy.js';
import { bearer, sampleApp } from '../../helpers/app.js';

/**
 * The interface's access and price table, written out independently of the policy table: every endpoint against every kind
 * of caller. 200 = answered; 401 = needs a key (or the key is bad); 403 = plan too low.
 */
type Access = 'public' | 'key' | 'personal' | 'professional';
interface Endpoint {
  /** The operation of the policy table this row checks: every operation must have a row. */
  op: string;
  method: 'GET' | 'POST';
  path: string;
  access: Access;
  body?: () => unknown;
}
/** A quote made by a Professional key before the matrix runs (the lab run rows run it). */
let quoteId = '';
const ENDPOINTS: Endpoint[] = [
  { op: 'listElements', method: 'GET', path: '/v1/elements', access: 'public' },
  { op: 'getElement', method: 'GET', path: '/v1/elements/Fe', access: 'public' },
  { op: 'getElementHistory', method: 'GET', path: '/v1/elements/Fe/history', access: 'key' },
  { op: 'getElementHistories', method: 'GET', path: '/v1/elements/history?symbols=Fe,Ni', access: 'key' },
  { op: 'getElementPapers', method: 'GET', path: '/v1/elements/Fe/papers', access: 'personal' },
  { op: 'listVersions', method: 'GET', path: '/v1/versions', access: 'public' },
  { op: 'listExports', method: 'GET', path: '/v1/exports', access: 'public' },
  // VERSION: the sample's data version, known once it is built.
  {
    op: 'getExportFile',
    method: 'GET',
    path: '/v1/exports/VERSION/elements.parquet',
    access: 'professional',
  },
  // The changes of every kind by default: topics and keywords need Personal (KIND_ACCESS).
  { op: 'listChanges', method: 'GET', path: '/v1/changes', access: 'personal' },
  { op: 'listChanges', method: 'GET', path: '/v1/changes?kind=element', access: 'key' },
  { op: 'listChanges', method: 'GET', path: '/v1/changes?kind=element,keyword', access: 'personal' },
  { op: 'getElementChanges', method: 'GET', path: '/v1/elements/Fe/changes', access: 'key' },
  {
    op: 'getSubjectChanges',
    method: 'GET',
    path: '/v1/subjects/topic/T10030/changes',
    access: 'personal',
  },
  // Feeds: what any key reads is open (a feed reader has no key); topics and keywords as their
  // changes. A bearer key opens them as a feed token of its plan does (feeds.test.ts).
  { op: 'getElementFeed', method: 'GET', path: '/v1/feeds/elements/Fe', access: 'public' },
  { op: 'getSubjectFeed', method: 'GET', path: '/v1/feeds/subjects/topic/T10030', access: 'personal' },
  {
    op: 'getSubjectSetFeed',
    method: 'GET',
    path: '/v1/feeds/subjects?subjects=element/Fe',
    access: 'public',
  },
  {
    op: 'getSubjectSetFeed',
    method: 'GET',
    path: '/v1/feeds/subjects?subjects=element/Fe,topic/T10030',
    access: 'personal',
  },
  { op: 'getRisingFeed', method: 'GET', path: '/v1/feeds/rising?kind=element', access: 'public' },
  { op: 'getRisingFeed', method: 'GET', path: '/v1/feeds/rising?kind=keyword', access: 'personal' },
  // Badges: as the feeds (a token in the URL, or a bearer key for a script); as what they draw: an
  // element's current RIS open, its yearly history to any key, a subject's from Personal
  // (badges.test.ts).
  { op: 'getElementBadge', method: 'GET', path: '/v1/badges/elements/Fe.svg', access: 'public' },
  { op: 'getElementHistoryBadge', method: 'GET', path: '/v1/badges/elements/Fe/history.svg', access: 'key' },
  { op: 'getSubjectBadge', method: 'GET', path: '/v1/badges/subjects/topic/T10030.svg', access: 'personal' },
  {
    op: 'getSubjectHistoryBadge',
    method: 'GET',
    path: '/v1/badges/subjects/topic/T10030/history.svg',
    access: 'personal',
  },
  { op: 'searchSubjects', method: 'GET', path: '/v1/subjects/search?q=oxygen%20evolution', access: 'key' },
  { op: 'getSubject', method: 'GET', path: '/v1/subjects/topic/T10030', access: 'personal' },
  { op: 'getSubjectHistory', method: 'GET', path: '/v1/subjects/topic/T10030/history', access: 'personal' },
  { op: 'getSubjectElements', method: 'GET', path: '/v1/subjects/topic/T10030/elements', access: 'personal' },
  { op: 'getSubjectPapers', method: 'GET', path: '/v1/subjects/topic/T10030/papers', access: 'personal' },
  { op: 'research', method: 'GET', path: '/v1/research?q=oxygen%20evolution', access: 'personal' },
  { op: 'labQuote', method: 'GET', path: '/v1/lab/quote?q=Ni%20Fe', access: 'professional' },
  {
    op: 'labQuotePost',
    method: 'POST',
    path: '/v1/lab/quote',
    access: 'professional',
    body: () => ({ query: 'Ni Fe' }),
  },
  { op: 'labRun', method: 'GET', path: '/v1/lab/run?depth=papers_20&quote_id=', access: 'professional' },
  {
    op: 'labRunPost',
    method: 'POST',
    path: '/v1/lab/run',
    access: 'professional',
    body: () => ({ quote_id: quoteId, depth: 'papers_20' }),
  },
];

const CALLERS = ['none', 'bad', 'free', 'personal', 'professional'] as const;

function expected(access: Access, caller: (typeof CALLERS)[number]): number {
  if (caller === 'bad') return 401;
  if (access === 'public') return 200;
  if (caller === 'none') return 401;
  if (access === 'key') return 200;
  if (access === 'professional') return caller === 'professional' ? 200 : 403;
  return caller === 'free' ? 403 : 200;
}

let ctx: Awaited<ReturnType<typeof sampleApp>>;
beforeAll(async () => {
  ctx = await sampleApp();
  const quote = await ctx.app.request('/v1/lab/quote?q=Ni%20Fe', bearer(ctx.keys.professional));
  quoteId = ((await quote.json()) as { quote_id: string }).quote_id;
});
afterAll(() => ctx.close());

describe('access matrix (full edition)', () => {
  it('has a row for every operation of the policy table, with its method and path', () => {
    const template = (path: string) => new RegExp(`^/v1${path.replace(/\{[^}]+\}/g, '[^/?]+')}(\\?.*)?$`);
    expect([...new Set(ENDPOINTS.map((e) => e.op))].sort()).toEqual(OPERATIONS.map((o) => o.id).sort());
    for (const e of ENDPOINTS) {
      const op = OPERATIONS.find((o) => o.id === e.op)!;
      expect(e.method, e.op).toBe(op.method);
      expect(e.path, e.op).toMatch(template(op.path));
    }
  });

  it('documents only operations of the policy table, each with its access level', async () => {
    const doc = (await (await ctx.app.request('/v1/openapi.json')).json()) as {
      paths: Record<string, Record<string, { operationId: string; 'x-access'?: string }>>;
    };
    const documented = Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.entries(item).map(([method, o]) => ({ path, method, ...o })),
    );
    expect(documented.length).toBe(OPERATIONS.length);
    for (const d of documented) {
      const op = OPERATIONS.find((o) => o.id === d.operationId);
      expect([d.operationId, op?.method, op?.path, d['x-access']]).toEqual([
        d.operationId,
        d.method.toUpperCase(),
        d.path,
        op?.access,
      ]);
    }
  });

  for (const { op, method, path, access, body } of ENDPOINTS) {
    for (const caller of CALLERS) {
      const want = expected(access, caller);
      it(`${op}: ${method} ${path} with ${caller} key -> ${want}`, async () => {
        const headers: Record<string, string> =
          caller === 'none'
            ? {}
            : caller === 'bad'
              ? bearer('ri_deadbeef_notarealkeynotarealkeynotarealkeynotarea').headers
              : bearer(ctx.keys[caller]).headers;
        const url = path.endsWith('quote_id=') ? `${path}${quoteId}` : path.replace('VERSION', ctx.version);
        const res = await ctx.app.request(url, {
          method,
          headers: body ? { ...headers, 'content-type': 'application/json' } : headers,
          ...(body ? { body: JSON.stringify(body()) } : {}),
        });
        expect(res.status).toBe(want);
        if (want !== 200) {
          expect(res.headers.get('content-type')).toBe('application/problem+json');
          const body = (await res.json()) as Record<string, unknown>;
          if (want === 401) {
            expect(body.code).toBe(caller === 'bad' ? 'invalid_key' : 'authentication_required');
            expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
          }
          if (want === 403) {
            expect(body).toMatchObject({
              code: 'plan_required',
              required_plan: access,
              current_plan: caller,
            });
            expect(body.upgrade_url).toBe('https://ri.example/pricing');
          }
        }
      });
    }
  }
});

describe('plan-dependent content', () => {
  it('shows HRI from the Personal plan up, and null with a note below', async () => {
    const anon = (await (await ctx.app.request('/v1/elements/O')).json()) as {
      hri: unknown;
      notes: { hri: string };
    };
    const free = (await (await ctx.app.request('/v1/elements/O', bearer(ctx.keys.free))).json()) as {
      hri: unknown;
    };
    const personal = (await (await ctx.app.request('/v1/elements/O', bearer(ctx.keys.personal))).json()) as {
      hri: unknown;
    };
    expect(anon.hri).toBeNull();
    expect(anon.notes.hri).toMatch(/Personal plan/);
    expect(free.hri).toBeNull();
    expect(typeof personal.hri).toBe('number');
  });

  it.each([
    ['yearly', 'free', 200],
    ['monthly', 'free', 403],
    ['monthly', 'personal', 200],
    ['daily', 'personal', 403],
    ['daily', 'professional', 200],
  ] as const)('element history resolution=%s with a %s key -> %i', async (resolution, plan, status) => {
    const res = await ctx.app.request(
      `/v1/elements/Fe/history?resolution=${resolution}`,
      bearer(ctx.keys[plan]),
    );
    expect(res.status).toBe(status);
    if (status === 403) expect(((await res.json()) as { code: string }).code).toBe('plan_required');
  });

  it('refuses daily history for a subject (elements only) with a 400 naming the parameter', async () => {
    const res = await ctx.app.request(
      '/v1/subjects/topic/T10030/history?resolution=daily',
      bearer(ctx.keys.professional),
    );
    expect(res.status).toBe(400);
    expect((await res.json()) as Record<string, unknown>).toMatchObject({
      code: 'invalid_parameter',
      parameter: 'resolution',
    });
  });
});

describe('access matrix (enterprise edition)', () => {
  let ent: Awaited<ReturnType<typeof sampleApp>>;
  beforeAll(async () => {
    ent = await sampleApp({ EDITION: 'enterprise' });
  });
  afterAll(() => ent.close());

  it('gates the paid endpoints on the one Enterprise plan', async () => {
    for (const { path, access } of ENDPOINTS) {
      if (access !== 'personal' || path.startsWith('/v1/research') || path.startsWith('/v1/lab')) continue;
      const personal = await ent.app.request(path, bearer(ent.keys.free));
      expect(personal.status).toBe(403);
      expect(((await personal.json()) as { required_plan: string }).required_plan).toBe('enterprise');
      expect((await ent.app.request(path, bearer(ent.keys.enterprise))).status).toBe(200);
    }
  });
});
