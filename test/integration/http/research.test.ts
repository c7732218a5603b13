import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { research as core, LENSES } from '../../../src/core/research.js';
import { bearer, sampleApp } from '../../helpers/app.js';

let ctx: Awaited<ReturnType<typeof sampleApp>>;
beforeAll(async () => {
  ctx = await sampleApp();
});
afterAll(() => ctx.close());

type Json = Record<string, unknown>;
type Paper = { title: string; doi: string | null; reason: string; year: number | null };
type Answer = Json & {
  communities: { name: string; subject_id: string; reason: string; rising: boolean }[];
  element_communities: { symbol: string; topic_name: string; reason: string }[];
  lists: Partial<Record<'foundational' | 'now' | 'newest', Paper[]>>;
  unmatched_terms: string[];
  next: { url: string; price: { usd: number } } | null;
  matched_papers: number;
};
const research = async (query: string, key = ctx.keys.personal) => {
  const res = await ctx.app.request(`/v1/research?${query}`, bearer(key));
  return { status: res.status, body: (await res.json()) as Answer };
};

describe('research on the real sample', () => {
  it.each([
    ['oxygen evolution nickel iron', 'Electrocatalysts for Energy Conversion'],
    ['CO2 reduction copper', 'CO2 Reduction Techniques and Catalysts'],
    ['reservoir porosity carbonate', 'Hydrocarbon exploration and reservoir analysis'],
  ])('%s -> the community %s, with reasons, and reading lists', async (q, community) => {
    const { status, body } = await research(`q=${encodeURIComponent(q)}&page_size=5`);
    expect(status).toBe(200);
    expect(body.communities.map((c) => c.name)).toContain(community);
    expect(body.communities.every((c) => c.reason.length > 0 && typeof c.rising === 'boolean')).toBe(true);
    expect(body.lists.now!.length).toBe(5);
    expect(body.lists.now!.every((p) => p.reason.length > 0)).toBe(true);
    expect(body.next).toMatchObject({ price: { usd: 0.05 } });
    expect(body.next!.url).toContain('page=2');
    expect(body.data_version).toBe(ctx.version);
  });

  it('finds the classics the matching papers cite, with the evidence', async () => {
    const { body } = await research('q=reservoir%20porosity%20carbonate&lenses=foundational&page_size=3');
    expect(Object.keys(body.lists)).toEqual(['foundational']);
    const classics = body.lists.foundational!;
    expect(classics).toHaveLength(3);
    expect(classics[0]!.reason).toMatch(/^cited by \d+ of the \d+ papers matching this question$/);
    const counts = classics.map((p) => Number(/cited by (\d+)/.exec(p.reason)![1]));
    expect(counts).toEqual([...counts].sort((a, b) => b - a));
  });

  it('understands shorthand and puts titles with every word first (HER MoS2)', async () => {
    const { body } = await research('q=HER%20MoS2&lenses=now');
    const first = body.lists.now![0]!;
    expect(first.title.toLowerCase()).toContain('mos2');
    expect(first.title.toLowerCase()).toContain('hydrogen evolution');
    expect(body.element_communities.map((e) => e.symbol)).toEqual(expect.arrayContaining(['Mo', 'S']));
  });

  it('keeps the newest lens to the last two years of the data', async () => {
    const { body } = await research('q=CO2%20reduction%20copper&lenses=newest&page_size=10');
    expect(body.lists.newest!.every((p) => (p.year ?? 0) >= 2025)).toBe(true);
  });

  it('fills the lists with looser matches when few titles have every word, never past 1,000 papers', async () => {
    const { status, body } = await research('q=copper%20catalyst%20methane%20oxidation&lenses=now,newest');
    expect(status).toBe(200);
    expect(body.matched_papers).toBeGreaterThan(20);
    expect(body.matched_papers).toBeLessThanOrEqual(1000);
    expect(body.lists.now).toHaveLength(10);
    expect(body.next).not.toBeNull();
    // Titles with every word lead; the looser matches come after them.
    const every = body.lists.now!.map((p) => p.reason.includes('every word'));
    expect(every).toEqual([...every].sort((a, b) => Number(b) - Number(a)));
  });

  it("answers with the core's JSON text, as application/json", async () => {
    const res = await ctx.app.request(
      '/v1/research?q=oxygen%20evolution&page_size=3',
      bearer(ctx.keys.personal),
    );
    expect(res.headers.get('content-type')).toBe('application/json');
    const snapshot = ctx.snapshots.acquire()!;
    try {
      const answer = core(
        snapshot,
        { q: 'oxygen evolution', pageSize: 3, lenses: [...LENSES], page: 1 },
        {
          hriAvailable: true,
          publicUrl: new URL(JSON.parse(await res.clone().text()).canonical_url).origin,
          edition: 'full',
        },
      );
      expect(await res.text()).toBe(JSON.stringify(answer));
    } finally {
      snapshot.release();
    }
  });

  it('lists words found nowhere as unmatched_terms, never drops them silently', async () => {
    const { body } = await research('q=perovskite%20stability%20zzqxv');
    expect(body.unmatched_terms).toEqual(['zzqxv']);
  });

  it('answers a question nothing matches with 404 nothing_matched', async () => {
    const { status, body } = await research('q=zzqxv%20flibbertigibbet');
    expect(status).toBe(404);
    expect(body.code).toBe('nothing_matched');
  });

  it('starts from a paper by DOI, and answers an unknown paper with 404 unknown_paper', async () => {
    const start = (await research('q=reservoir%20porosity%20carbonate&lenses=now&page_size=1')).body.lists
      .now![0]!;
    const { status, body } = await research(`paper=${encodeURIComponent(start.doi!)}&page_size=3`);
    expect(status).toBe(200);
    expect(body.lists.now!.map((p) => p.doi)).not.toContain(start.doi);
    const unknown = await research('paper=10.9999%2Fnot-a-paper');
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('unknown_paper');
  });

  it('takes a DOI in every form a reader writes it: bare, doi:, DOI:, the resolver URL, any case', async () => {
    const start = (await research('q=oxygen%20evolution%20nickel&lenses=now&page_size=1')).body.lists
      .now![0]!;
    const doi = start.doi!;
    const forms = [
      doi,
      doi.toUpperCase(),
      `doi:${doi}`,
      `DOI:${doi.toUpperCase()}`,
      `doi: ${doi}`,
      `https://doi.org/${doi}`,
      `http://dx.doi.org/${doi}`,
    ];
    const seeds = new Set<string>();
    for (const form of forms) {
      const { status, body } = await research(`paper=${encodeURIComponent(form)}&page_size=1`);
      expect(status, form).toBe(200);
      seeds.add(body.q as string);
    }
    // One paper whatever the form: the answer's question is its title.
    expect([...seeds]).toEqual([start.title]);
  });

  it('names in next the data_version its page came from, pinned or not', async () => {
    const { body } = await research('q=reservoir%20porosity%20carbonate&page_size=1&lenses=now');
    const next = new URL(body.next!.url);
    expect(next.searchParams.get('data_version')).toBe(body.data_version);
    const res = await ctx.app.request(`${next.pathname}${next.search}`, bearer(ctx.keys.personal));
    expect(res.status).toBe(200);
    const page2 = (await res.json()) as Answer;
    expect(page2).toMatchObject({ page: 2, data_version: body.data_version });
    expect(new URL(page2.next!.url).searchParams.get('page')).toBe('3');
  });

  it('pages up to 5 and gives no next after the last', async () => {
    const page5 = (await research('q=reservoir%20porosity%20carbonate&page=5&page_size=1')).body;
    expect(page5.next).toBeNull();
    const page2 = (await research('q=reservoir%20porosity%20carbonate&page=2&page_size=1&lenses=now')).body;
    const page1 = (await research('q=reservoir%20porosity%20carbonate&page=1&page_size=1&lenses=now')).body;
    expect(page2.lists.now![0]!.title).not.toBe(page1.lists.now![0]!.title);
  });

  it.each([
    ['q=x&page=6', 'page'],
    ['q=x&page_size=11', 'page_size'],
    ['q=x&lenses=best', 'lenses'],
    ['q=x&paper=10.1%2Fx', 'paper'],
    ['page=1', 'q'],
  ])('refuses %s with 400 naming %s', async (query, parameter) => {
    const { status, body } = await research(query);
    expect(status).toBe(400);
    expect(body).toMatchObject({ code: 'invalid_parameter', parameter });
  });

  it('needs the Personal plan; the older edition has no research endpoint', async () => {
    expect((await research('q=oxygen', ctx.keys.free)).status).toBe(403);
    const ent = await sampleApp({ EDITION: 'enterprise' });
    const res = await ent.app.request('/v1/research?q=oxygen', bearer(ent.keys.enterprise));
    expect(res.status).toBe(404);
    await ent.close();
  });
});
