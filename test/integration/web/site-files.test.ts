import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, sampleApp } from '../../helpers/app.js';

type Ctx = Awaited<ReturnType<typeof sampleApp>>;
/** The PUBLIC_URL sampleApp configures. */
const PUBLIC = 'https://ri.example';
let ctx: Ctx;

beforeAll(async () => {
  ctx = await sampleApp();
}, 120_000);

afterAll(async () => {
  await ctx?.close();
});

const get = (path: string, headers: Record<string, string> = {}) => ctx.app.request(path, { headers });

describe('the files a browser and a crawler ask for', () => {
  it('serves the icon at /favicon.svg and at /favicon.ico, which browsers ask without a link', async () => {
    for (const path of ['/favicon.svg', '/favicon.ico']) {
      const res = await get(path);
      expect([path, res.status, res.headers.get('content-type')]).toEqual([path, 200, 'image/svg+xml']);
      expect(await res.text()).toMatch(/^<svg [^>]*xmlns="http:\/\/www.w3.org\/2000\/svg"/);
    }
  });

  it('robots.txt lets crawlers read the pages, not the API or the account, and names the sitemap', async () => {
    const res = await get('/robots.txt');
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    const text = await res.text();
    expect(text).toMatch(/^User-agent: \*$/m);
    for (const path of ['/v1/', '/mcp', '/account']) expect(text).toContain(`Disallow: ${path}\n`);
    const sitemap = /^Sitemap: (\S+)$/m.exec(text)?.[1];
    expect(sitemap).toBe(`${PUBLIC}/sitemap.xml`);
  });

  it('robots.txt names only pages this edition has', async () => {
    const older = await sampleApp({ EDITION: 'enterprise' });
    try {
      for (const [edition, app] of [
        ['full', ctx.app],
        ['enterprise', older.app],
      ] as const) {
        const robots = await (await app.request('/robots.txt')).text();
        const paths = [...robots.matchAll(/^Disallow: (\S+)$/gm)].map((m) => m[1]!);
        expect(paths, edition).toContain('/account');
        // The API and MCP are disallowed as prefixes; every page disallowed is one that answers.
        for (const path of paths.filter((p) => p !== '/v1/' && p !== '/mcp')) {
          const res = await app.request(path);
          await res.text();
          expect([edition, path, res.status]).not.toEqual([edition, path, 404]);
        }
        if (edition === 'full') expect(paths).toEqual(expect.arrayContaining(['/research', '/lab']));
      }
    } finally {
      await older.close();
    }
  });

  it('sitemap.xml lists the table, every element and every topic of the data, and each answers 200', async () => {
    const res = await get('/sitemap.xml');
    expect(res.headers.get('content-type')).toMatch(/^application\/xml/);
    const xml = await res.text();
    expect(xml).toMatch(
      /^<\?xml version="1.0" encoding="UTF-8"\?>\n<urlset xmlns="http:\/\/www.sitemaps.org\/schemas\/sitemap\/0.9">/,
    );
    const urls = [...xml.matchAll(/<loc>([^<]+)<\/loc>/g)].map((m) => m[1]!);
    const paths = urls.map((u) => u.slice(PUBLIC.length));
    expect(new Set(paths).size).toBe(paths.length);
    expect(paths.filter((p) => p.startsWith('/elements/'))).toHaveLength(118);
    const topics = paths.filter((p) => p.startsWith('/subjects/topic/'));
    const search = (await (
      await get('/v1/subjects/search?q=oxygen%20evolution', bearer(ctx.keys.free).headers)
    ).json()) as { results: { subject_type: string; subject_id: string }[] };
    const found = search.results.find((r) => r.subject_type === 'topic')!.subject_id;
    expect(topics).toContain(`/subjects/topic/${found}`);
    // The pages answer (every element, the first topics and the last).
    for (const path of [
      ...paths.filter((p) => !p.startsWith('/subjects/')),
      ...topics.slice(0, 5),
      topics.at(-1)!,
    ])
      expect([path, (await get(path)).status]).toEqual([path, 200]);
  });

  it('gives every page kind a description, OpenGraph tags and the icon; the element pages their own words', async () => {
    for (const path of [
      '/',
      '/elements/Fe',
      '/pricing',
      '/docs/errors',
      '/account',
      `/subjects/topic/T10030`,
    ]) {
      const text = await (await get(path)).text();
      const meta = (name: string) =>
        new RegExp(`<meta (?:name|property)="${name}" content="([^"]+)">`).exec(text)?.[1];
      expect([
        path,
        Boolean(meta('description')),
        Boolean(meta('og:title')),
        Boolean(meta('og:description')),
      ]).toEqual([path, true, true, true]);
      expect(text).toContain('<link rel="icon" href="/favicon.svg" type="image/svg+xml">');
    }
    const fe = await (await get('/elements/Fe')).text();
    expect(fe).toMatch(
      /<meta name="description" content="Research intensity of Iron \(Fe\): RI [\d.]+ papers per 10,000/,
    );
    expect(fe).toContain(`<link rel="canonical" href="${PUBLIC}/elements/Fe">`);
  });
});
