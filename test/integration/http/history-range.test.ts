import { decodePaymentRequiredHeader } from '@x402/core/http';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer } from '../../helpers/app.js';
import { PAID_CONFIG, servedSample } from '../../helpers/x402.js';

/**
 * A history narrowed by from, to and last (REST, over real HTTP on the bundled sample): element,
 * subject and batch, JSON and CSV, checked against the whole history filtered here by the
 * periods' own text (zero-padded months and days order as text).
 */
// biome-ignore lint/suspicious/noExplicitAny: answers are read loosely; each test asserts the shape it needs
type Json = Record<string, any>;
interface Point {
  period: string;
}

let served: Awaited<ReturnType<typeof servedSample>>;
let paying: Awaited<ReturnType<typeof servedSample>>;
let pro: ReturnType<typeof bearer>;
let topic: string;

beforeAll(async () => {
  served = await servedSample();
  paying = await servedSample(PAID_CONFIG);
  pro = bearer(served.ctx.keys.professional);
  const search = await get('/v1/subjects/search?q=oxygen%20evolution');
  topic = search.body.results.find((r: Json) => r.subject_type === 'topic').subject_id;
}, 120_000);
afterAll(async () => {
  await served?.close();
  await paying?.close();
});

async function get(path: string, init: RequestInit = pro, base = served.server.base) {
  const res = await fetch(`${base}${path}`, init);
  const text = await res.text();
  const json = res.headers.get('content-type')?.includes('json') ? (JSON.parse(text) as Json) : {};
  return { res, body: json, text };
}

/** The periods a range selects from a whole series, by the labels' text. */
function expected<T extends Point>(whole: T[], range: { from?: string; to?: string; last?: number }): T[] {
  const within = whole.filter(
    (p) =>
      (range.from === undefined || p.period >= range.from) &&
      (range.to === undefined || p.period <= range.to),
  );
  return range.last === undefined ? within : within.slice(-range.last);
}

const query = (range: { from?: string; to?: string; last?: number }) =>
  Object.entries(range)
    .map(([k, v]) => `&${k}=${v}`)
    .join('');

describe('GET .../history with from, to and last', () => {
  it('narrows an element history at each resolution, as the whole history filtered', async () => {
    for (const resolution of ['yearly', 'monthly', 'daily'] as const) {
      const whole = (await get(`/v1/elements/Fe/history?resolution=${resolution}`)).body.series as Point[];
      expect(whole.length).toBeGreaterThan(10);
      const at = (i: number) => whole[i]!.period;
      const ranges = [
        { from: at(3), to: at(8) },
        { from: at(whole.length - 5) },
        { to: at(4) },
        { last: 7 },
        { to: at(whole.length - 3), last: 4 },
        { from: at(2), last: 3 },
        { from: at(5), to: at(5) },
        { last: whole.length + 100 },
      ];
      for (const range of ranges) {
        const { res, body } = await get(`/v1/elements/Fe/history?resolution=${resolution}${query(range)}`);
        expect([resolution, range, res.status]).toEqual([resolution, range, 200]);
        expect(body.series).toEqual(expected(whole, range));
        expect(body.series.length).toBeGreaterThan(0);
        expect(body.notes.empty).toBeUndefined();
      }
    }
  });

  it('narrows a subject history and a batch the same way', async () => {
    const whole = (await get(`/v1/subjects/topic/${topic}/history?resolution=monthly`)).body
      .series as Point[];
    const range = { from: whole[2]!.period, to: whole[whole.length - 2]!.period, last: 5 };
    const narrowed = await get(`/v1/subjects/topic/${topic}/history?resolution=monthly${query(range)}`);
    expect(narrowed.res.status).toBe(200);
    expect(narrowed.body.series).toEqual(expected(whole, range));
    expect(narrowed.body.series).toHaveLength(5);

    const batchWhole = (await get('/v1/elements/history?symbols=Fe,Ni,Co&resolution=monthly')).body;
    const batchRange = { from: '2020-01', to: '2021-06' };
    const batch = await get(`/v1/elements/history?symbols=Fe,Ni,Co&resolution=monthly${query(batchRange)}`);
    expect(batch.res.status).toBe(200);
    expect(batch.body.histories.map((h: Json) => h.symbol)).toEqual(['Fe', 'Ni', 'Co']);
    for (const [i, h] of batch.body.histories.entries())
      expect([h.symbol, h.series]).toEqual([h.symbol, expected(batchWhole.histories[i].series, batchRange)]);
    expect(batch.body.histories[0].series.map((p: Point) => p.period)).toEqual([
      ...['01', '02', '03', '04', '05', '06', '07', '08', '09', '10', '11', '12'].map((m) => `2020-${m}`),
      ...['01', '02', '03', '04', '05', '06'].map((m) => `2021-${m}`),
    ]);
    const lastOne = await get('/v1/elements/history?symbols=Fe,Ni&last=1');
    const wholeYearly = (await get('/v1/elements/history?symbols=Fe,Ni')).body.histories as Json[];
    expect(lastOne.body.histories.map((h: Json) => h.series)).toEqual(
      wholeYearly.map((h) => h.series.slice(-1)),
    );
  });

  it('answers the same range as CSV, the records of the JSON series', async () => {
    const cases = [
      '/v1/elements/Fe/history?resolution=daily&from=2025-01-01&to=2025-01-31',
      `/v1/subjects/topic/${topic}/history?resolution=monthly&last=6`,
      '/v1/elements/history?symbols=Fe,Ni&resolution=yearly&from=2018&to=2020',
    ];
    for (const path of cases) {
      const json = (await get(path)).body;
      const csv = await get(`${path}&format=csv`);
      expect([path, csv.res.status, csv.res.headers.get('content-type')]).toEqual([
        path,
        200,
        'text/csv; charset=utf-8',
      ]);
      const rows = parse(csv.text, { columns: true }) as Record<string, string>[];
      const points: Json[] = json.histories
        ? json.histories.flatMap((h: Json) => h.series.map((p: Json) => ({ symbol: h.symbol, ...p })))
        : json.series;
      expect(points.length).toBeGreaterThan(0);
      expect(rows.map((r) => [r.symbol, r.period])).toEqual(points.map((p) => [p.symbol, p.period]));
      expect(rows.map((r) => Number(r.ri))).toEqual(points.map((p) => p.ri));
    }
    expect(
      (parse((await get(`${cases[0]}&format=csv`)).text, { columns: true }) as Json[]).map((r) => r.period),
    ).toHaveLength(31);
  });

  it('answers a range that holds no period with an empty series that says why', async () => {
    const { res, body } = await get('/v1/elements/Fe/history?from=2100');
    expect(res.status).toBe(200);
    expect(body.series).toEqual([]);
    expect(body.notes.empty).toMatch(
      /^series is empty: the range asked \(from 2100\) holds none of its periods, which run from \d{4} to \d{4}\.$/,
    );
    const batch = await get('/v1/elements/history?symbols=Fe,Ni&to=1900');
    expect(batch.body.notes.empty).toMatch(/series is empty for Fe, Ni: the range asked \(to 1900\)/);
  });

  it('refuses a range it cannot read with 400 invalid_parameter naming the parameter, uncharged', async () => {
    const cases: [string, string, RegExp][] = [
      [
        '/v1/elements/Fe/history?resolution=daily&from=2024-03',
        'from',
        /not a period of a daily history, whose periods are days, YYYY-MM-DD/,
      ],
      ['/v1/elements/Fe/history?resolution=monthly&to=2024', 'to', /whose periods are months, YYYY-MM/],
      ['/v1/elements/Fe/history?from=2024-03-15', 'from', /whose periods are years, YYYY/],
      ['/v1/elements/Fe/history?resolution=daily&from=2024-02-30', 'from', /'2024-02-30' is not a period/],
      ['/v1/elements/Fe/history?resolution=monthly&from=2024-13', 'from', /'2024-13'/],
      ['/v1/elements/Fe/history?from=2024&to=2020', 'from', /from \(2024\) is after to \(2020\)/],
      ['/v1/elements/Fe/history?last=0', 'last', /expected an integer from 1 to 100000/],
      ['/v1/elements/Fe/history?last=100001', 'last', /expected an integer from 1 to 100000/],
      ['/v1/elements/Fe/history?last=1e3', 'last', /in decimal digits/],
      [
        '/v1/elements/Fe/history?from=last%20year',
        'from',
        /expected a period: 2024 \(yearly\), 2024-03 \(monthly\) or 2024-03-15 \(daily\)/,
      ],
      ['/v1/elements/history?symbols=Fe,Ni&resolution=daily&to=2024', 'to', /YYYY-MM-DD/],
      [`/v1/subjects/topic/T10030/history?resolution=monthly&from=2024-05&to=2024-04`, 'from', /is after to/],
      [`/v1/subjects/topic/T10030/history?last=-1`, 'last', /from 1 to/],
    ];
    for (const [path, parameter, detail] of cases) {
      const { res, body } = await get(path);
      expect([path, res.status, res.headers.get('content-type')]).toEqual([
        path,
        400,
        'application/problem+json',
      ]);
      expect([path, body.code, body.parameter]).toEqual([path, 'invalid_parameter', parameter]);
      expect(body.detail).toMatch(detail);
    }
    // Without a key, on a server that takes payments: refused before any payment is asked.
    for (const [path] of cases) {
      const { res, body } = await get(path, {}, paying.server.base);
      expect([path, res.status, body.code]).toEqual([path, 400, 'invalid_parameter']);
    }
  });

  it('keeps the price: a range asks what the whole history asks, per symbol for a batch', async () => {
    const amount = async (path: string) => {
      const { res } = await get(path, {}, paying.server.base);
      expect([path, res.status]).toEqual([path, 402]);
      return decodePaymentRequiredHeader(res.headers.get('payment-required')!).accepts[0]!.amount;
    };
    expect(await amount('/v1/elements/Fe/history?last=2')).toBe(await amount('/v1/elements/Fe/history'));
    expect(await amount('/v1/elements/Fe/history?resolution=daily&from=2025-01-01')).toBe(
      await amount('/v1/elements/Fe/history?resolution=daily'),
    );
    expect(await amount('/v1/elements/history?symbols=Fe,Ni&from=2020&to=2021')).toBe(
      await amount('/v1/elements/history?symbols=Fe,Ni'),
    );
    expect(await amount(`/v1/subjects/topic/${topic}/history?last=1`)).toBe(
      await amount(`/v1/subjects/topic/${topic}/history`),
    );
  });

  it('documents from, to and last on the three history operations', async () => {
    const doc = (await get('/v1/openapi.json', {})).body;
    for (const path of [
      '/elements/{symbol}/history',
      '/elements/history',
      '/subjects/{subject_type}/{subject_id}/history',
    ]) {
      const params = doc.paths[path].get.parameters as Json[];
      const named = (name: string) => params.find((p) => p.name === name && p.in === 'query');
      expect([path, named('from')?.schema.pattern, named('to')?.required ?? false]).toEqual([
        path,
        expect.any(String),
        false,
      ]);
      expect([path, named('last')?.schema]).toEqual([
        path,
        expect.objectContaining({ type: 'integer', minimum: 1, maximum: 100000 }),
      ]);
      expect(named('from')!.description).toMatch(/2024-03-15/);
    }
  });
});
