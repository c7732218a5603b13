import { connect } from 'node:net';
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HOSTILE_STRINGS } from '../../../bench/hostile-strings.mjs';
import type { DevChain } from '../../../scripts/dev-chain.mjs';
import { type Config, loadConfig } from '../../../src/config/config.js';
import { ERROR_CODES } from '../../../src/core/errors.js';
import { type RunningServer, startServer } from '../../../src/http/server.js';
import { paymentsFromConfig } from '../../../src/payments/from-config.js';
import { sampleApp } from '../../helpers/app.js';
import { type OpenApiDoc, responseValidators, type Schema } from '../../helpers/contract.js';
import { freePort, PAID_CONFIG, paidSetup } from '../../helpers/x402.js';

/**
 * Hostile input at volume: requests generated from the service's own OpenAPI document (every
 * parameter of every operation, valid and invalid values, hostile strings), plus random bytes in
 * paths, query strings, headers and bodies, sent as raw bytes over real HTTP (a socket, so nothing
 * is cleaned up on the way) to the real server (server limits, payments on) on the sample data.
 *
 * Properties: never a 5xx (a 503 only with its documented temporary code); every error is
 * application/problem+json whose `code` is in the error catalogue and whose `status` is the
 * answer's; every status of a documented operation is one its responses list (or a general
 * one: 405, 413, 414, 431); every 200 validates against the operation's response schema.
 *
 * Fixed seed (PROPERTY_SEED to change it, PROPERTY_RUNS for more); a failure prints the seed and
 * the raw requests that failed.
 */
const SEED = Number(process.env.PROPERTY_SEED ?? 20261123);
const RUNS = Number(process.env.PROPERTY_RUNS ?? 5000);
const CONCURRENCY = 8;

const CATALOGUE = new Set(ERROR_CODES.map((e) => e.code));
const TEMPORARY_503 = new Set(['data_unavailable', 'state_unavailable', 'payment_unavailable']);
/** Statuses any operation may answer besides its documented ones (method, size and header limits). */
const GENERAL = new Set([405, 413, 414, 431]);

interface Parameter {
  in: 'path' | 'query' | 'header';
  name: string;
  required?: boolean;
  schema: Schema;
}
interface Operation {
  method: 'GET' | 'POST';
  template: string;
  parameters: Parameter[];
  body?: Schema;
  responses: Record<
    string,
    { content?: Record<string, { schema: Schema }>; 'x-alternative-content'?: Record<string, unknown> }
  >;
}

/** One request to send: the raw bytes, and what it was generated for. */
interface Sample {
  op: Operation | null;
  method: string;
  target: string;
  headers: [string, string][];
  body: Buffer | null;
}

let chain: DevChain;
let server: RunningServer;
let port: number;
let ctx: Awaited<ReturnType<typeof sampleApp>>;
let operations: Operation[];
let validators: Map<string, (v: unknown) => { valid: boolean; errorMessage?: string }>;
const logged: string[] = [];
const pools = {
  symbol: ['Fe', 'fe', 'O', 'Ni', 'Uuo', 'Og', 'H'],
  topic: ['T10030'],
  keyword: ['catalysis'],
  q: ['oxygen evolution', 'nickel iron', 'perovskite'],
  lab: ['Ni Fe', 'perovskite -Pb year:2020..', '(Ni OR Co) Fe', 'cataly* year:2019', '"oxygen evolution" Fe'],
  quoteIds: [] as string[],
  quotes: [] as unknown[],
  keys: {} as Record<string, string>,
};

beforeAll(async () => {
  const setup = await paidSetup();
  chain = setup.chain;
  port = await freePort();
  const publicUrl = `http://127.0.0.1:${port}`;
  const overrides: Partial<Config> = {
    ...PAID_CONFIG,
    PUBLIC_URL: publicUrl,
    publicUrl,
    PORT: port,
    HOST: '127.0.0.1',
    // The property is about answers, not budgets: 5,000 requests from one address and key.
    RATE_LIMIT_PER_IP: 1_000_000,
    RATE_LIMIT_PER_KEY: 1_000_000,
  };
  ctx = await sampleApp(overrides, { facilitator: setup.facilitator });
  const config = loadConfig({}, overrides);
  const payments = paymentsFromConfig(config, ctx.state, { facilitator: setup.facilitator });
  server = await startServer(
    config,
    ctx.snapshots,
    ctx.state,
    (msg, fields) => logged.push(`${msg} ${JSON.stringify(fields ?? {})}`),
    { payments },
  );
  pools.keys = ctx.keys;

  const doc = (await (await fetch(`${server.url}/v1/openapi.json`)).json()) as {
    paths: Record<string, Record<string, Omit<Operation, 'method' | 'template'>>>;
    components: { schemas: Record<string, Schema> };
  };
  operations = Object.entries(doc.paths).flatMap(([template, item]) =>
    Object.entries(item).map(([method, op]) => {
      const raw = op as unknown as {
        parameters?: Parameter[];
        requestBody?: { content: { 'application/json': { schema: Schema } } };
        responses: Operation['responses'];
      };
      return {
        method: method.toUpperCase() as 'GET' | 'POST',
        template,
        parameters: raw.parameters ?? [],
        ...(raw.requestBody ? { body: raw.requestBody.content['application/json'].schema } : {}),
        responses: raw.responses,
      };
    }),
  );
  validators = responseValidators(doc as unknown as OpenApiDoc);

  // Valid values from the data itself: subjects, a quote to run.
  const auth = { authorization: `Bearer ${ctx.keys.professional}` };
  const search = (await (
    await fetch(`${server.url}/v1/subjects/search?q=oxygen`, { headers: auth })
  ).json()) as {
    results: { subject_type: string; subject_id: string }[];
  };
  for (const r of search.results) pools[r.subject_type as 'topic' | 'keyword'].push(r.subject_id);
  for (const q of pools.lab) {
    const res = await fetch(`${server.url}/v1/lab/quote?q=${encodeURIComponent(q)}`, { headers: auth });
    const quote = (await res.json()) as { quote_id?: string };
    if (res.status !== 200 || !quote.quote_id) continue;
    pools.quoteIds.push(quote.quote_id);
    pools.quotes.push(quote);
  }
  expect(pools.quoteIds.length).toBeGreaterThan(0);
}, 180_000);

afterAll(async () => {
  await server?.close();
  await ctx?.close();
  await chain?.stop();
});

describe('requests generated from the OpenAPI document, and random bytes', () => {
  it(`${RUNS} requests: no 5xx, every error a catalogued problem, every 200 as documented`, async () => {
    expect(operations.length).toBeGreaterThanOrEqual(14);
    // The response schemas do refuse: an empty object is not an element list.
    expect(validators.get('GET /elements')!({}).valid).toBe(false);
    const samples = fc.sample(requestArb(), { seed: SEED, numRuns: RUNS });
    const failures: string[] = [];
    const seen = new Map<string, number>();
    const kinds = new Map<string, number>();
    const firsts: string[] = [];
    const statuses = new Map<number, number>();
    let next = 0;
    const worker = async () => {
      while (next < samples.length) {
        const sample = samples[next++]!;
        const problem = await check(sample, statuses).catch((e: Error) => `no answer: ${e.message}`);
        const label = sample.op ? `${sample.method} ${sample.op.template}` : `${sample.method} (random)`;
        seen.set(label, (seen.get(label) ?? 0) + 1);
        if (problem) failures.push(`${problem}\n    request: ${show(sample)}`);
        if (problem) {
          const kind = problem.slice(0, 90);
          if (!kinds.has(kind)) firsts.push(`${problem}\n    request: ${show(sample)}`);
          kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
        }
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    if (process.env.PROPERTY_VERBOSE)
      console.log('statuses', Object.fromEntries([...statuses].sort((a, b) => a[0] - b[0])));
    if (failures.length > 0) {
      const errors = logged.filter((l) => l.startsWith('request failed'));
      throw new Error(
        `${failures.length} of ${samples.length} requests broke a property (seed ${SEED}; rerun with PROPERTY_SEED=${SEED}):\n` +
          `${[...kinds].map(([k, n]) => `  ${n} x ${k}`).join('\n')}\nthe first of each kind:\n` +
          `${firsts.slice(0, 12).join('\n')}\nserver log: ${errors.slice(0, 5).join('\n')}`,
      );
    }
    // Every operation was asked, and random requests too.
    for (const op of operations) expect(seen.get(`${op.method} ${op.template}`) ?? 0).toBeGreaterThan(50);
    expect([...seen.keys()].filter((k) => k.endsWith('(random)')).length).toBeGreaterThan(2);
  }, 240_000);
});

describe('found by the property test', () => {
  it("answers Node's own refusals with codes of the error catalogue (bad_request was not in it)", async () => {
    const res = await send({
      op: null,
      method: 'GET',
      target: '/v1/elements/\u0001',
      headers: [],
      body: null,
    });
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body.toString())).toMatchObject({ code: 'bad_request', status: 400 });
    for (const code of ['bad_request', 'request_timeout', 'headers_too_large'])
      expect(CATALOGUE).toContain(code);
    const page = await (await fetch(`${server.url}/docs/errors`)).text();
    expect(page).toContain('id="bad_request"');
  });

  it('answers a backslash in the path with a problem, not an empty 400', async () => {
    const res = await send({
      op: null,
      method: 'GET',
      target: '/v1/subjects/\\x/T1',
      headers: [],
      body: null,
    });
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toBe('application/problem+json');
    expect(JSON.parse(res.body.toString())).toMatchObject({ code: 'bad_request', status: 400 });
  });
});

// ---------------------------------------------------------------------------------------------
// What is sent

function hostileString(): fc.Arbitrary<string> {
  return fc.oneof(
    fc.constantFrom(...HOSTILE_STRINGS),
    fc.string({ maxLength: 40 }),
    fc.string({ unit: 'binary', maxLength: 40 }),
    fc.string({ unit: 'grapheme', maxLength: 20 }),
  );
}

/** A valid value of a parameter, from the data where the schema alone cannot say. */
function validValue(p: Parameter): fc.Arbitrary<string> {
  const s = p.schema;
  if (Array.isArray(s.enum)) return fc.constantFrom(...(s.enum as string[]));
  if (s.type === 'integer')
    return fc.integer({ min: Number(s.minimum ?? 0), max: Number(s.maximum ?? 1000) }).map(String);
  switch (p.name) {
    case 'symbol':
      return fc.constantFrom(...pools.symbol);
    case 'subject_id':
      return fc.constantFrom(...pools.topic, ...pools.keyword);
    case 'quote_id':
      return fc.constantFrom(...pools.quoteIds, 'q_unknown');
    case 'keyword':
      return fc.constantFrom(...pools.keyword);
    case 'lenses':
      return fc.subarray(['foundational', 'now', 'newest'], { minLength: 1 }).map((l) => l.join(','));
    case 'paper':
      return fc.constantFrom('10.1038/nature12373', 'Oxygen evolution on nickel iron oxides', 'constructor');
    case 'from':
    case 'to':
      // A history's period, in each resolution's form (one that is not the resolution's is a 400).
      return fc.constantFrom('2015', '2024', '2020-03', '2025-12', '2025-06-30', '2026-01-01');
    default:
      if (p.name === 'q' && p.schema.maxLength === 2000) return fc.constantFrom(...pools.lab);
      return fc.constantFrom(...pools.q);
  }
}

/** A value the schema refuses: out of range, wrong type, too long, not in the enum. */
function invalidValue(p: Parameter): fc.Arbitrary<string> {
  const s = p.schema;
  const options: fc.Arbitrary<string>[] = [fc.constant('')];
  const allowed = Array.isArray(s.enum) ? (s.enum as string[]) : null;
  if (allowed) options.push(fc.string({ minLength: 1, maxLength: 12 }).filter((v) => !allowed.includes(v)));
  if (s.type === 'integer') {
    const min = Number(s.minimum ?? 0);
    const max = Number(s.maximum ?? 1000);
    options.push(
      fc.constantFrom(
        String(min - 1),
        String(max + 1),
        '1.5',
        'abc',
        '0x10',
        '1e3',
        ' 7',
        '99999999999999999999999',
      ),
      fc.integer().map(String),
    );
  }
  if (typeof s.maxLength === 'number') options.push(fc.constant('x'.repeat(s.maxLength + 1)));
  return fc.oneof(...options);
}

/** A parameter's part of the request: absent, valid, invalid, hostile, or repeated. */
function paramArb(p: Parameter): fc.Arbitrary<string[] | null> {
  return fc.oneof(
    { weight: 8, arbitrary: validValue(p).map((v) => [v]) },
    { weight: 2, arbitrary: invalidValue(p).map((v) => [v]) },
    { weight: 2, arbitrary: hostileString().map((v) => [v]) },
    { weight: 1, arbitrary: fc.constant(null) },
    { weight: 1, arbitrary: fc.tuple(validValue(p), validValue(p)) },
  );
}

/** Percent-encodes UTF-8 (lone surrogates become U+FFFD), or leaves the bytes raw now and then. */
function encode(value: string, raw: boolean): string {
  const bytes = Buffer.from(value, 'utf8');
  if (raw) return bytes.toString('latin1');
  return [...bytes]
    .map((b) =>
      /[A-Za-z0-9\-_.~]/.test(String.fromCharCode(b))
        ? String.fromCharCode(b)
        : `%${b.toString(16).toUpperCase().padStart(2, '0')}`,
    )
    .join('');
}

function authArb(): fc.Arbitrary<[string, string][]> {
  return fc.oneof(
    {
      weight: 6,
      arbitrary: fc.constant([['authorization', `Bearer ${pools.keys.professional}`]] as [string, string][]),
    },
    { weight: 4, arbitrary: fc.constant([] as [string, string][]) },
    {
      weight: 2,
      arbitrary: fc
        .constantFrom(
          `Bearer ${pools.keys.free}`,
          `Bearer ${pools.keys.personal}`,
          'Bearer ri_bogus_key',
          'Bearer ',
          'Basic dXNlcjpwYXNz',
          `bearer ${pools.keys.professional}`,
          `Bearer ${pools.keys.professional} extra`,
        )
        .map((v) => [['authorization', v]] as [string, string][]),
    },
    { weight: 1, arbitrary: hostileString().map((v) => [['authorization', v]] as [string, string][]) },
  );
}

function extraHeadersArb(): fc.Arbitrary<[string, string][]> {
  return fc.subarray<[string, string]>([
    ['accept-encoding', 'br, gzip, deflate'],
    ['accept', 'text/html'],
    ['accept', '*/*;q=0.1, application/xml'],
    ['x-forwarded-for', '1.2.3.4, 5.6.7.8'],
    ['payment-signature', 'not-base64!!'],
    ['payment-signature', Buffer.from('{"x402Version":2,"payload":{}}').toString('base64')],
    ['x-request-id', 'a'.repeat(300)],
    ['origin', 'https://evil.example'],
    ['if-none-match', '"*"'],
    ['range', 'bytes=0-10'],
    ['expect', '100-continue'],
  ]);
}

/** A body the operation takes (its quote may be tampered with: a valid shape, a refused signature). */
function validBodyArb(op: Operation): fc.Arbitrary<unknown> {
  return op.template === '/lab/quote'
    ? fc.oneof(
        fc.constantFrom(...pools.lab).map((query) => ({ query })),
        fc.constantFrom(...pools.lab).map((q) => ({ markdown: `Notes\n\n\`\`\`query\n${q}\n\`\`\`\n` })),
      )
    : fc.oneof(
        fc.record({
          quote_id: fc.constantFrom(...pools.quoteIds),
          depth: fc.constantFrom('papers_20', 'papers_100'),
        }),
        fc.record({
          quote: fc.constantFrom(...pools.quotes),
          depth: fc.constantFrom('papers_20', 'papers_100'),
        }),
        fc.record({ quote: fc.constantFrom(...pools.quotes).map(tamper), depth: fc.constant('papers_20') }),
      );
}

function jsonBodyArb(op: Operation): fc.Arbitrary<unknown> {
  const valid = validBodyArb(op);
  return fc.oneof(
    { weight: 5, arbitrary: valid },
    { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 4 }) },
    {
      weight: 2,
      arbitrary: fc.dictionary(
        fc.constantFrom('query', 'markdown', 'quote', 'quote_id', 'depth', 'extra'),
        fc.jsonValue({ maxDepth: 3 }),
      ),
    },
    { weight: 1, arbitrary: valid.map((v) => ({ ...(v as object), unknown_field: 1 })) },
  );
}

/** A quote with one field changed (its signature no longer matches). */
function tamper(quote: unknown): unknown {
  return { ...(quote as Record<string, unknown>), query: 'Au', run_price: { usd: -0.01 } };
}

function bodyArb(op: Operation): fc.Arbitrary<{ body: Buffer; type: string | null }> {
  return fc.oneof(
    {
      weight: 6,
      arbitrary: jsonBodyArb(op).map((v) => ({
        body: Buffer.from(JSON.stringify(v) ?? 'null'),
        type: 'application/json',
      })),
    },
    {
      weight: 1,
      arbitrary: fc
        .uint8Array({ maxLength: 300 })
        .map((b) => ({ body: Buffer.from(b), type: 'application/json' })),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(
          jsonBodyArb(op),
          fc.constantFrom(
            null,
            'text/plain',
            'application/x-www-form-urlencoded',
            'application/json; charset=latin1',
            'multipart/form-data; boundary=x',
          ),
        )
        .map(([v, type]) => ({ body: Buffer.from(JSON.stringify(v) ?? ''), type })),
    },
    { weight: 1, arbitrary: fc.constant({ body: Buffer.alloc(0), type: 'application/json' }) },
    {
      weight: 1,
      arbitrary: fc.constant({
        body: Buffer.from(`{"quote":${'['.repeat(20_000)}${']'.repeat(20_000)},"depth":"papers_20"}`),
        type: 'application/json',
      }),
    },
  );
}

interface Parts {
  params: (readonly [Parameter, string[] | null])[];
  rawPath: boolean;
  unknownParam: [string, string] | null;
  auth: [string, string][];
  extra: [string, string][];
  head: boolean;
  body: { body: Buffer; type: string | null } | null;
}

/** Half the requests are ones the operation should answer 200 or a data 404 to; the others mix in every kind of wrong. */
function operationArb(op: Operation): fc.Arbitrary<Sample> {
  return fc.oneof(
    { weight: 2, arbitrary: validPartsArb(op).map((parts) => toSample(op, parts)) },
    { weight: 3, arbitrary: mixedPartsArb(op).map((parts) => toSample(op, parts)) },
  );
}

function validPartsArb(op: Operation): fc.Arbitrary<Parts> {
  const params = op.parameters.map((p) =>
    (p.required || p.in === 'path'
      ? validValue(p).map((v) => [v])
      : fc.option(
          validValue(p).map((v) => [v]),
          { freq: 3 },
        )
    ).map((v) => [p, v] as const),
  );
  return fc.record({
    params: fc.tuple(...params),
    rawPath: fc.constant(false),
    unknownParam: fc.constant(null),
    auth: fc.constant([['authorization', `Bearer ${pools.keys.professional}`]] as [string, string][]),
    extra: fc.subarray<[string, string]>([
      ['accept-encoding', 'br, gzip, deflate'],
      ['accept', '*/*'],
    ]),
    head: fc.integer({ min: 0, max: 19 }).map((n) => n === 0),
    body:
      op.method === 'POST'
        ? validBodyArb(op).map((v) => ({ body: Buffer.from(JSON.stringify(v)), type: 'application/json' }))
        : fc.constant(null),
  });
}

function mixedPartsArb(op: Operation): fc.Arbitrary<Parts> {
  const params = op.parameters.map((p) => paramArb(p).map((v) => [p, v] as const));
  return fc.record({
    params: fc.tuple(...params),
    rawPath: fc.integer({ min: 0, max: 19 }).map((n) => n === 0),
    unknownParam: fc.option(
      fc.tuple(fc.constantFrom('foo', 'limit', 'Q', 'q[]', '__proto__'), hostileString()),
      { freq: 8 },
    ),
    auth: authArb(),
    extra: extraHeadersArb(),
    head: fc.integer({ min: 0, max: 19 }).map((n) => n === 0),
    body: op.method === 'POST' ? bodyArb(op) : fc.constant(null),
  });
}

function toSample(op: Operation, { params, rawPath, unknownParam, auth, extra, head, body }: Parts): Sample {
  let path = `/v1${op.template}`;
  const query: string[] = [];
  for (const [p, values] of params) {
    if (p.in === 'path') {
      // An absent path parameter is an empty segment (another route, or none).
      path = path.replace(`{${p.name}}`, values ? encode(values[0]!, rawPath) : '');
    } else if (p.in === 'query' && values) {
      for (const v of values) query.push(`${encode(p.name, false)}=${encode(v, false)}`);
    }
  }
  if (unknownParam) query.push(`${encode(unknownParam[0], false)}=${encode(unknownParam[1], false)}`);
  const headers: [string, string][] = [...auth, ...extra];
  if (body?.type) headers.push(['content-type', body.type]);
  return {
    op,
    method: head && op.method === 'GET' ? 'HEAD' : op.method,
    target: query.length ? `${path}?${query.join('&')}` : path,
    headers,
    body: body?.body ?? null,
  };
}

/** Random bytes where a path, a query string or a body goes; any method. */
function randomArb(): fc.Arbitrary<Sample> {
  const bytes = (max: number) =>
    fc.uint8Array({ maxLength: max }).map((b) => Buffer.from(b).toString('latin1'));
  return fc
    .record({
      method: fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD', 'TRACE', 'FOO'),
      prefix: fc.constantFrom(
        '/v1/',
        '/v1/elements/',
        '/v1/subjects/topic/',
        '/v1/lab/',
        '/',
        '/mcp',
        '/docs/',
      ),
      path: fc.oneof(
        bytes(60),
        fc.string({ maxLength: 60 }).map((s) => encode(s, false)),
      ),
      query: fc.option(bytes(80), { freq: 2 }),
      body: fc.option(
        fc.uint8Array({ maxLength: 500 }).map((b) => Buffer.from(b)),
        { freq: 2 },
      ),
      auth: authArb(),
    })
    .map(({ method, prefix, path, query, body, auth }) => ({
      op: null,
      method,
      target: `${prefix}${path}${query !== null ? `?${query}` : ''}`,
      headers: auth,
      body,
    }));
}

function requestArb(): fc.Arbitrary<Sample> {
  return fc.oneof(
    { weight: 12, arbitrary: fc.oneof(...operations.map(operationArb)) },
    { weight: 1, arbitrary: randomArb() },
  );
}

// ---------------------------------------------------------------------------------------------
// What is checked

async function check(sample: Sample, statuses: Map<number, number>): Promise<string | null> {
  const res = await send(sample);
  statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
  const what = `${res.status} ${res.headers['content-type'] ?? '(no type)'}`;
  const isHead = sample.method === 'HEAD';
  let problem: { code?: unknown; status?: unknown } | null = null;
  // /mcp speaks JSON-RPC: its refusals are JSON-RPC errors (the MCP transport's own shape).
  const mcp = /^\/mcp(\?|$)/.test(sample.target);
  if (res.status >= 400 && !isHead && !mcp) {
    if (!String(res.headers['content-type']).startsWith('application/problem+json'))
      return `${what}: an error that is not application/problem+json: ${res.body.toString('utf8').slice(0, 200)}`;
    try {
      problem = JSON.parse(res.body.toString('utf8')) as { code?: unknown; status?: unknown };
    } catch {
      return `${what}: a problem body that is not JSON`;
    }
    if (!CATALOGUE.has(String(problem.code)))
      return `${what}: code '${String(problem.code)}' is not in the error catalogue`;
    if (problem.status !== res.status) return `${what}: body status ${String(problem.status)} differs`;
  }
  if (res.status >= 500) {
    if (res.status !== 503 || (problem && !TEMPORARY_503.has(String(problem.code))))
      return `${what}: a server error (${String(problem?.code ?? '')})`;
  }
  if (!sample.op) return null;
  if (!GENERAL.has(res.status) && !(String(res.status) in sample.op.responses) && res.status !== 402)
    return `${what}: status not documented for ${sample.op.method} ${sample.op.template}`;
  if (res.status === 200 && !isHead && String(res.headers['content-type']).startsWith('text/csv')) {
    // A tabular read asked for as CSV (format=csv): documented as the JSON answer's text/csv
    // alternative (openapi.ts), a header row first.
    if (!sample.op.responses['200']?.['x-alternative-content']?.['text/csv'])
      return `${what}: CSV is not documented for ${sample.op.method} ${sample.op.template}`;
    if (!/^[a-z_]+(,[a-z_]+)*\r\n/.test(res.body.toString('utf8')))
      return `${what}: a CSV answer without its header row`;
    return null;
  }
  if (
    res.status === 200 &&
    !isHead &&
    String(res.headers['content-type']).startsWith('application/atom+xml')
  ) {
    // A feed: documented as Atom, and an Atom feed (feeds.test.ts parses them with a feed parser).
    const content = (sample.op.responses['200'] as { content?: Record<string, unknown> } | undefined)
      ?.content;
    if (!content?.['application/atom+xml'])
      return `${what}: Atom is not documented for ${sample.op.method} ${sample.op.template}`;
    if (!/^<\?xml[^>]*\?>\s*<feed xmlns="http:\/\/www\.w3\.org\/2005\/Atom">/.test(res.body.toString('utf8')))
      return `${what}: an Atom answer that is not an Atom feed`;
    return null;
  }
  if (res.status === 200 && !isHead && String(res.headers['content-type']).startsWith('image/svg+xml')) {
    // A badge: documented as SVG, and an SVG image (badges.test.ts parses them with a browser's XML parser).
    const content = (sample.op.responses['200'] as { content?: Record<string, unknown> } | undefined)
      ?.content;
    if (!content?.['image/svg+xml'])
      return `${what}: SVG is not documented for ${sample.op.method} ${sample.op.template}`;
    if (!/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"[^>]* role="img"/.test(res.body.toString('utf8')))
      return `${what}: an SVG answer that is not an SVG image`;
    return null;
  }
  if (res.status === 200 && !isHead) {
    const body = JSON.parse(res.body.toString('utf8')) as unknown;
    const verdict = validators.get(`${sample.op.method} ${sample.op.template}`)!(body);
    if (!verdict.valid) return `${what}: the 200 does not match its schema: ${verdict.errorMessage}`;
  }
  return null;
}

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

/** One request over its own connection, bytes exactly as generated; the answer read to the end. */
function send(sample: Sample): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error('no answer in 20 s'));
    }, 20_000);
    socket.on('data', (c) => chunks.push(c));
    socket.on('error', (e) => {
      // The server may close after answering a request it refused before reading its body.
      if (chunks.length === 0) {
        clearTimeout(timer);
        reject(e);
      }
    });
    socket.on('close', () => {
      clearTimeout(timer);
      try {
        resolve(parse(Buffer.concat(chunks), sample.method === 'HEAD'));
      } catch (e) {
        reject(e);
      }
    });
    const lines = [
      `${sample.method} ${sample.target} HTTP/1.1`,
      `host: 127.0.0.1:${port}`,
      'connection: close',
      ...sample.headers.map(([k, v]) => `${k}: ${v.replace(/[\r\n]/g, ' ')}`),
      ...(sample.body ? [`content-length: ${sample.body.length}`] : []),
    ];
    socket.write(Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'));
    if (sample.body) socket.write(sample.body);
  });
}

function parse(whole: Buffer, head: boolean): Answer {
  let raw = whole;
  // Interim answers (100 Continue to an Expect header) come before the answer.
  while (/^HTTP\/1\.1 1\d\d /.test(raw.subarray(0, 13).toString('latin1')))
    raw = raw.subarray(raw.indexOf('\r\n\r\n') + 4);
  const end = raw.indexOf('\r\n\r\n');
  if (end < 0) throw new Error(`no HTTP answer (${raw.length} bytes)`);
  const [statusLine, ...headerLines] = raw.subarray(0, end).toString('latin1').split('\r\n');
  const status = Number(statusLine!.split(' ')[1]);
  const headers: Record<string, string> = {};
  for (const line of headerLines) {
    const i = line.indexOf(':');
    headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
  }
  let body = head ? Buffer.alloc(0) : raw.subarray(end + 4);
  if (!head && headers['transfer-encoding'] === 'chunked') body = dechunk(body);
  const encoding = headers['content-encoding'];
  if (body.length > 0 && encoding === 'gzip') body = gunzipSync(body);
  else if (body.length > 0 && encoding === 'br') body = brotliDecompressSync(body);
  else if (body.length > 0 && encoding === 'deflate') body = inflateSync(body);
  return { status, headers, body };
}

function dechunk(data: Buffer): Buffer {
  const out: Buffer[] = [];
  let at = 0;
  for (;;) {
    const eol = data.indexOf('\r\n', at);
    if (eol < 0) break;
    const size = Number.parseInt(data.subarray(at, eol).toString('latin1'), 16);
    if (!size) break;
    out.push(data.subarray(eol + 2, eol + 2 + size));
    at = eol + 2 + size + 2;
  }
  return Buffer.concat(out);
}

function show(s: Sample): string {
  const text = `${s.method} ${s.target}`;
  const body = s.body ? ` body(${s.body.length}): ${s.body.toString('latin1').slice(0, 120)}` : '';
  const headers = s.headers
    .map(([k, v]) => `${k}: ${k === 'authorization' ? v.slice(0, 12) : v.slice(0, 40)}`)
    .join(' | ');
  return JSON.stringify(`${text.slice(0, 300)} [${headers}]${body}`);
}

/** An OpenAPI 3.0 schema as JSON Schema (draft 7): references inlined, `nullable` as a null type. */
