import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { servedSample } from '../../helpers/x402.js';

let served: Awaited<ReturnType<typeof servedSample>>;

beforeAll(async () => {
  served = await servedSample();
}, 120_000);

afterAll(async () => {
  await served?.close();
});

/**
 * As a spreadsheet's import from a URL or pandas.read_csv(url) asks: no Accept header (a key only
 * where the list needs one, as pandas' storage_options sends it), the form in the URL.
 */
async function csvByUrl(path: string, key?: string) {
  const res = await fetch(`${served.server.base}${path}`, {
    headers: key ? { authorization: `Bearer ${key}` } : {},
  });
  expect([path, res.status, res.headers.get('content-type')]).toEqual([path, 200, 'text/csv; charset=utf-8']);
  const rows = parse(await res.text(), { columns: true, skip_empty_lines: true }) as Record<string, string>[];
  return { rows, res };
}

describe('CSV by URL alone (format=csv)', () => {
  it('reads every list with a CSV parser: elements, histories, a batch, paper lists', async () => {
    const pro = served.ctx.keys.professional;
    const elements = await csvByUrl('/v1/elements?format=csv');
    expect(elements.rows).toHaveLength(118);
    expect(elements.rows[25]).toMatchObject({ symbol: 'Fe', name: 'Iron', atomic_number: '26' });
    expect(Number(elements.rows[25]!.ri)).toBeGreaterThan(0);
    expect(elements.res.headers.get('ri-data-version')).toMatch(/^[0-9a-f]{16}$/);

    const history = await csvByUrl('/v1/elements/Fe/history?format=csv', pro);
    expect(Object.keys(history.rows[0]!)).toEqual(expect.arrayContaining(['period', 'ri', 'ris', 'hri']));
    const batch = await csvByUrl('/v1/elements/history?symbols=Fe,Ni&format=csv', pro);
    expect(new Set(batch.rows.map((r) => r.symbol))).toEqual(new Set(['Fe', 'Ni']));
    const papers = await csvByUrl('/v1/elements/Fe/papers?limit=5&format=csv', pro);
    expect(papers.rows).toHaveLength(5);
    expect(papers.rows[0]).toHaveProperty('title');
    const topic = (
      (await (
        await fetch(`${served.server.base}/v1/subjects/search?q=oxygen%20evolution`, {
          headers: { authorization: `Bearer ${pro}` },
        })
      ).json()) as { results: { subject_type: string; subject_id: string }[] }
    ).results.find((r) => r.subject_type === 'topic')!.subject_id;
    const subjectHistory = await csvByUrl(`/v1/subjects/topic/${topic}/history?format=csv`, pro);
    expect(subjectHistory.rows.length).toBeGreaterThan(0);
    const subjectPapers = await csvByUrl(`/v1/subjects/topic/${topic}/papers?limit=3&format=csv`, pro);
    expect(subjectPapers.rows).toHaveLength(3);
  });

  it('lets a script of another origin read the envelope in its headers (CORS exposes Link and RI-Data-Version)', async () => {
    const pro = served.ctx.keys.professional;
    for (const path of ['/v1/elements?format=csv', '/v1/elements/Ni/papers?limit=2&format=csv']) {
      const res = await fetch(`${served.server.base}${path}`, {
        headers: { origin: 'https://app.example', authorization: `Bearer ${pro}` },
      });
      expect(res.status).toBe(200);
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
      const exposed = (res.headers.get('access-control-expose-headers') ?? '')
        .split(',')
        .map((h) => h.trim().toLowerCase());
      // Every header the CSV form carries its envelope in, as csv.ts sets them.
      for (const name of ['link', 'ri-data-version']) {
        expect(res.headers.get(name), name).toBeTruthy();
        expect(exposed, name).toContain(name);
      }
    }
  });

  it('format=json is JSON whatever Accept says; another format is a 400 naming the parameter', async () => {
    const base = served.server.base;
    const json = await fetch(`${base}/v1/elements?format=json`, { headers: { accept: 'text/csv' } });
    expect(json.headers.get('content-type')).toMatch(/^application\/json/);
    expect(((await json.json()) as { count: number }).count).toBe(118);
    // Accept alone still works, and the two forms of one URL are kept apart by caches.
    const accept = await fetch(`${base}/v1/elements`, { headers: { accept: 'text/csv' } });
    expect(accept.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(accept.headers.get('vary')).toMatch(/accept/i);
    const bad = await fetch(`${base}/v1/elements?format=xml`);
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ code: 'invalid_parameter', parameter: 'format' });
  });
});

describe('subjects whose ids are not plain URL segments', () => {
  it("a keyword with '/' or letters beyond Latin-1: its canonical_url is its page, its CSV names it in Link", async () => {
    const snapshot = served.ctx.snapshots.acquire()!;
    const ids = snapshot.db
      .prepare("SELECT id FROM subjects WHERE type = 'keyword' ORDER BY id")
      .pluck()
      .all() as string[];
    snapshot.release();
    const odd = [
      ids.find((id) => id.includes('/')),
      ids.find((id) => [...id].some((ch) => ch.codePointAt(0)! > 0xff)),
    ];
    expect(odd.every(Boolean)).toBe(true);
    const personal = { authorization: `Bearer ${served.ctx.keys.personal}` };
    for (const id of odd as string[]) {
      const api = `${served.server.base}/v1/subjects/keyword/${encodeURIComponent(id)}`;
      const answer = (await (await fetch(api, { headers: personal })).json()) as { canonical_url: string };
      const page = await fetch(answer.canonical_url.replace(/^https?:\/\/[^/]+/, served.server.base));
      expect([id, page.status, page.headers.get('content-type')?.toLowerCase()]).toEqual([
        id,
        200,
        'text/html; charset=utf-8',
      ]);
      const csv = await fetch(`${api}/papers?format=csv`, { headers: personal });
      expect([id, csv.status]).toEqual([id, 200]);
      const papers = (await (await fetch(`${api}/papers`, { headers: personal })).json()) as {
        canonical_url: string;
      };
      expect(csv.headers.get('link')).toBe(`<${papers.canonical_url}>; rel="canonical"`);
    }
  });
});
