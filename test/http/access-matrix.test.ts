import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, sampleApp } from '../helpers/app.js';

/**
 * Spec part 4, written out independently of the policy table: every endpoint against every kind
 * of caller. 200 = answered; 401 = needs a key (or the key is bad); 403 = plan too low.
 */
type Access = 'public' | 'key' | 'personal' | 'professional';
const ENDPOINTS: { path: string; access: Access }[] = [
  { path: '/v1/elements', access: 'public' },
  { path: '/v1/elements/Fe', access: 'public' },
  { path: '/v1/elements/Fe/history', access: 'key' },
  { path: '/v1/elements/Fe/papers', access: 'personal' },
  { path: '/v1/subjects/search?q=oxygen%20evolution', access: 'key' },
  { path: '/v1/subjects/topic/T10030', access: 'personal' },
  { path: '/v1/subjects/topic/T10030/history', access: 'personal' },
  { path: '/v1/subjects/topic/T10030/elements', access: 'personal' },
  { path: '/v1/subjects/topic/T10030/papers', access: 'personal' },
  { path: '/v1/research?q=oxygen%20evolution', access: 'personal' },
  { path: '/v1/lab/quote?q=Ni%20Fe', access: 'professional' },
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
});
afterAll(() => ctx.close());

describe('access matrix (full edition)', () => {
  for (const { path, access } of ENDPOINTS) {
    for (const caller of CALLERS) {
      const want = expected(access, caller);
      it(`${path} with ${caller} key -> ${want}`, async () => {
        const init =
          caller === 'none'
            ? {}
            : caller === 'bad'
              ? bearer('ri_deadbeef_notarealkeynotarealkeynotarealkeynotarea')
              : bearer(ctx.keys[caller]);
        const res = await ctx.app.request(path, init);
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
