import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, type sampleApp } from '../../helpers/app.js';
import { servedSample } from '../../helpers/x402.js';

type Ctx = Awaited<ReturnType<typeof sampleApp>>;
let ctx: Ctx;
let server: { base: string; close(): Promise<void> };

let served: Awaited<ReturnType<typeof servedSample>>;

beforeAll(async () => {
  served = await servedSample();
  ({ ctx, server } = served);
}, 120_000);

afterAll(async () => {
  await served?.close();
});

/** Every URL in a JSON value: string values that are URLs, and URLs inside text (notes, details). */
function urlsIn(value: unknown, out: Set<string>): void {
  if (typeof value === 'string') {
    for (const m of value.matchAll(/https?:\/\/[^\s"'<>)]+/g)) out.add(m[0].replace(/[.,;:]+$/, ''));
  } else if (Array.isArray(value)) for (const v of value) urlsIn(v, out);
  else if (value && typeof value === 'object') for (const v of Object.values(value)) urlsIn(v, out);
}

describe('every URL the service prints answers', () => {
  it('collects the URLs of every endpoint answer and error on the sample data, and each one is 200', async () => {
    const pro = bearer(ctx.keys.professional).headers;
    const get = async (path: string, headers: Record<string, string> = pro) =>
      (await fetch(`${server.base}${path}`, { headers })).json();
    const search = (await get('/v1/subjects/search?q=oxygen%20evolution')) as {
      results: { subject_type: string; subject_id: string }[];
    };
    const topic = search.results.find((r) => r.subject_type === 'topic')!.subject_id;
    const quote = (await get('/v1/lab/quote?q=Ni%20Fe')) as { quote_id: string };
    const answers: unknown[] = [
      search,
      quote,
      await get('/v1/elements'),
      await get('/v1/elements/Fe'),
      await get('/v1/elements', {}),
      await get('/v1/elements/Fe/history?resolution=monthly'),
      await get('/v1/elements/Fe/papers?limit=5'),
      await get(`/v1/subjects/topic/${topic}`),
      await get(`/v1/subjects/topic/${topic}/history`),
      await get(`/v1/subjects/topic/${topic}/elements`),
      await get(`/v1/subjects/topic/${topic}/papers?limit=5`),
      await get('/v1/research?q=oxygen%20evolution%20nickel&page_size=2'),
      await get('/v1/research?paper=oxygen%20evolution&page_size=2'),
      await get(`/v1/lab/run?quote_id=${quote.quote_id}&depth=papers_20`),
      // Errors: their type, upgrade_url and the hints in their detail.
      await get('/v1/elements/Fe/history', {}),
      await get('/v1/elements/Fe/papers', bearer(ctx.keys.free).headers),
      await get('/v1/elements/Xx'),
      await get('/v1/subjects/topic/T99999999'),
      await get('/v1/lab/quote?q=-Fe'),
      await get('/v1/research?q=zzqxv%20wwkpj'),
      await get('/v1/nothing-here'),
      await get('/v1/elements/Fe', { authorization: 'Bearer ri_bad' }),
      // The API's root, and the document that prints it as its base address.
      await get('/v1'),
      await get('/v1', {}),
      await get('/v1/openapi.json', {}),
    ];
    const urls = new Set<string>();
    for (const a of answers) urlsIn(a, urls);
    // Papers link to their source records (DOI or OpenAlex): not this service's pages, and not
    // reachable from this machine; every other URL must be this server's.
    const external = [...urls].filter((u) => !u.startsWith(server.base));
    expect(external.filter((u) => !/^https:\/\/(doi\.org|openalex\.org)\//.test(u))).toEqual([]);
    const own = [...urls].filter((u) => u.startsWith(server.base));
    expect(own.length).toBeGreaterThan(40);
    const failures: string[] = [];
    for (const url of own) {
      // The MCP server answers JSON-RPC over POST (a GET says so, 405): asked for its tools.
      const res = url.endsWith('/mcp')
        ? await fetch(url, {
            method: 'POST',
            headers: {
              ...pro,
              'content-type': 'application/json',
              accept: 'application/json, text/event-stream',
            },
            body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
          })
        : await fetch(url, { headers: url.includes('/v1/') ? pro : {} });
      const text = await res.text();
      if (res.status !== 200) failures.push(`${res.status} ${url}`);
      const anchor = new URL(url).hash.slice(1);
      if (anchor && !text.includes(`id="${anchor}"`)) failures.push(`no #${anchor} in ${url}`);
    }
    expect(failures).toEqual([]);
  });

  it('serves the periodic table with 118 linked cells, a year selector, and an element page with its chart', async () => {
    const home = await (await fetch(`${server.base}/`)).text();
    expect(home.match(/<a class="b\d c\d+ r\d+" href/g)?.length).toBe(118);
    const years = [...home.matchAll(/<option value="(\d{4})"/g)].map((m) => m[1]!);
    expect(years.length).toBeGreaterThan(3);
    const year = years[years.length - 2]!;
    const stepped = await (await fetch(`${server.base}/?year=${year}`)).text();
    expect(stepped).toContain(`Research intensity of the elements in ${year}`);
    expect(stepped).toContain(`<option value="${year}" selected>`);
    const fe = await fetch(`${server.base}/elements/Fe`);
    expect(fe.status).toBe(200);
    const feHtml = await fe.text();
    expect(feHtml).toContain('<h1>Iron (Fe)</h1>');
    expect(feHtml.match(/<svg class="chart"/g)?.length).toBe(2);
    // Nothing a visitor's plan does not include: no HRI value, no paper list.
    expect(feHtml).toContain('Shown with the Personal plan');
    expect(feHtml).not.toMatch(/doi\.org/);
    const missing = await fetch(`${server.base}/elements/Xx`);
    expect(missing.status).toBe(404);
    expect(missing.headers.get('content-type')).toMatch(/text\/html/);
  });

  it('an unknown page path is the not-found page for a browser, a problem for API clients', async () => {
    const browser = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' };
    const known = await (await fetch(`${server.base}/elements/Xx`, { headers: browser })).text();
    for (const path of ['/elements/Fe/extra', '/nothing-here', '/subjects/topic/T10030/more/parts']) {
      const page = await fetch(`${server.base}${path}`, { headers: browser });
      expect([path, page.status, page.headers.get('content-type')]).toEqual([
        path,
        404,
        'text/html; charset=UTF-8',
      ]);
      expect(page.headers.get('content-security-policy'), path).toMatch(/default-src 'self'/);
      const text = await page.text();
      // The same page as an unknown element's: its heading and the way home.
      for (const part of ['<h1>Not found</h1>', '<p><a href="/">The periodic table</a></p>'])
        expect([path, known.includes(part), text.includes(part)]).toEqual([path, true, true]);
      for (const headers of [{ accept: 'application/json' }, {}] as Record<string, string>[]) {
        const api = await fetch(`${server.base}${path}`, { headers });
        await api.text();
        expect([path, api.status, api.headers.get('content-type')]).toEqual([
          path,
          404,
          'application/problem+json',
        ]);
      }
    }
    // The API and the service's own addresses answer a problem, whoever asks.
    for (const path of [
      '/v1/nothing-here',
      '/v1/elements/Fe/extra',
      '/mcp/x',
      '/healthz/x',
      '/.well-known/x',
    ]) {
      const r = await fetch(`${server.base}${path}`, { headers: browser });
      await r.text();
      expect([path, r.status, r.headers.get('content-type')]).toEqual([
        path,
        404,
        'application/problem+json',
      ]);
    }
  });

  it('the pricing page states every price from the price table, the batch history per symbol', async () => {
    const pricing = await (await fetch(`${server.base}/pricing`)).text();
    expect(pricing).toContain('/v1/elements/history');
    expect(pricing).toMatch(/0\.05 USD per symbol/);
  });
});
