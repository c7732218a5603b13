import { Hono } from 'hono';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { MemoryRateLimiter } from '../../../src/access/rate-limiter.js';
import { createMetrics, type Metrics, metricsHandler, metricsMiddleware } from '../../../src/http/metrics.js';
import { middlewareChain } from '../../../src/http/middleware.js';
import { handleError } from '../../../src/http/problem.js';
import { rateLimitMiddleware } from '../../../src/http/rate-limit.js';

function tinyApp(metrics: Metrics) {
  const app = new Hono();
  app.use('*', middlewareChain([metricsMiddleware(metrics)]));
  app.get('/metrics', metricsHandler(metrics));
  const v1 = new Hono();
  v1.get('/elements', (c) => c.json([]));
  v1.get('/elements/:symbol', (c) =>
    c.req.param('symbol') === 'Xx' ? c.json({ error: 'unknown' }, 404) : c.json({ ok: true }),
  );
  v1.get('/boom', () => {
    throw new Error('boom');
  });
  app.route('/v1', v1);
  app.onError((_e, c) => c.json({ error: true }, 500));
  return app;
}

/** Minimal Prometheus text-format parser: HELP/TYPE comments and `name{labels} value` samples. */
function parse(text: string) {
  const help = new Map<string, string>();
  const type = new Map<string, string>();
  const samples: { name: string; labels: Record<string, string>; value: number }[] = [];
  for (const line of text.split('\n')) {
    if (line === '') continue;
    let m = /^# HELP (\w+) (.*)$/.exec(line);
    if (m) {
      help.set(m[1]!, m[2]!);
      continue;
    }
    m = /^# TYPE (\w+) (counter|gauge|histogram|summary|untyped)$/.exec(line);
    if (m) {
      type.set(m[1]!, m[2]!);
      continue;
    }
    m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`unparseable line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, k, v] of (m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[k!] = v!;
    // Prometheus reads values with Go's ParseFloat: NaN and ±Inf in any case are valid.
    const raw = m[3]!;
    const special = /^([+-]?)(inf|nan)$/i.exec(raw);
    const value = special
      ? special[2]!.toLowerCase() === 'nan'
        ? Number.NaN
        : (special[1] === '-' ? -1 : 1) * Number.POSITIVE_INFINITY
      : Number(raw);
    if (!special && Number.isNaN(value)) throw new Error(`bad value: ${line}`);
    samples.push({ name: m[1]!, labels, value });
  }
  return { help, type, samples };
}

const sample = (s: ReturnType<typeof parse>, name: string, labels: Record<string, string>) =>
  s.samples.find((x) => x.name === name && Object.entries(labels).every(([k, v]) => x.labels[k] === v))
    ?.value;

describe('metrics', () => {
  it('counts and times requests by route pattern, never the raw path', async () => {
    const metrics = createMetrics();
    const app = tinyApp(metrics);
    for (const path of ['/v1/elements/H', '/v1/elements/He', '/v1/elements/Xx', '/v1/elements', '/v1/boom'])
      await app.request(path);
    await app.request('/nope/1');
    await app.request('/v1/nope/2');

    const res = await app.request('/metrics');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    const parsed = parse(text);

    const total = (route: string, status: string) =>
      sample(parsed, 'http_requests_total', { method: 'GET', route, status });
    expect(total('/v1/elements/:symbol', '200')).toBe(2);
    expect(total('/v1/elements/:symbol', '404')).toBe(1);
    expect(total('/v1/elements', '200')).toBe(1);
    expect(total('/v1/boom', '500')).toBe(1);
    expect(total('unmatched', '404')).toBe(2);
    expect(text).not.toMatch(/route="\/v1\/elements\/H"/);
    expect(text).not.toMatch(/nope/);

    expect(parsed.type.get('http_requests_total')).toBe('counter');
    expect(parsed.type.get('http_request_duration_seconds')).toBe('histogram');
    expect(parsed.help.get('http_requests_total')).toBeTruthy();
    const count = sample(parsed, 'http_request_duration_seconds_count', {
      route: '/v1/elements/:symbol',
      status: '200',
    });
    expect(count).toBe(2);
    const inf = sample(parsed, 'http_request_duration_seconds_bucket', {
      route: '/v1/elements/:symbol',
      status: '200',
      le: '+Inf',
    });
    expect(inf).toBe(2);
    // Default process metrics are there.
    expect(parsed.type.get('process_cpu_user_seconds_total')).toBe('counter');
    expect(parsed.samples.some((s) => s.name === 'nodejs_heap_size_used_bytes')).toBe(true);

    // The scrape itself is counted on the next one.
    const again = parse(await (await app.request('/metrics')).text());
    expect(sample(again, 'http_requests_total', { route: '/metrics', status: '200' })).toBe(1);
  });

  it('exports the event-loop delay since the last scrape (p50, p90, p99, max)', async () => {
    const metrics = createMetrics();
    const app = tinyApp(metrics);
    await app.request('/metrics');
    // The scrape restarts the monitor, which measures from its next tick (every 10 ms): wait for
    // it, block the loop for 80 ms, then let the monitor's timer fire.
    await new Promise((r) => setTimeout(r, 30));
    const until = performance.now() + 80;
    while (performance.now() < until);
    await new Promise((r) => setTimeout(r, 30));
    const parsed = parse(await (await app.request('/metrics')).text());
    for (const name of ['p50', 'p90', 'p99', 'max'])
      expect(parsed.type.get(`nodejs_eventloop_lag_${name}_seconds`)).toBe('gauge');
    expect(sample(parsed, 'nodejs_eventloop_lag_max_seconds', {})).toBeGreaterThanOrEqual(0.05);
  });

  it('snapshot_info carries the data version being served, one series at a time', async () => {
    const metrics = createMetrics({ defaultMetrics: false });
    const app = tinyApp(metrics);
    metrics.setDataVersion('2024-01-01T00-00-00Z');
    metrics.setDataVersion('2024-02-01T00-00-00Z');
    const parsed = parse(await (await app.request('/metrics')).text());
    expect(parsed.type.get('snapshot_info')).toBe('gauge');
    const info = parsed.samples.filter((s) => s.name === 'snapshot_info');
    expect(info).toEqual([
      { name: 'snapshot_info', labels: { data_version: '2024-02-01T00-00-00Z' }, value: 1 },
    ]);
    metrics.setDataVersion(null);
    // The handler can follow the served version itself, on every scrape.
    let served: string | null = 'v1';
    const follow = new Hono().get('/metrics', metricsHandler(metrics, { dataVersion: () => served }));
    expect(await (await follow.request('/metrics')).text()).toMatch(
      /^snapshot_info\{data_version="v1"\} 1$/m,
    );
    served = 'v2';
    const text = await (await follow.request('/metrics')).text();
    expect(text).toMatch(/^snapshot_info\{data_version="v2"\} 1$/m);
    expect(text).not.toMatch(/data_version="v1"/);
    served = null;
    expect(await (await follow.request('/metrics')).text()).not.toMatch(/^snapshot_info\{/m);
    const none = parse(await (await app.request('/metrics')).text());
    expect(none.samples.filter((s) => s.name === 'snapshot_info')).toEqual([]);
  });

  it('two registries do not share state; unknown methods are bucketed', async () => {
    const a = createMetrics({ defaultMetrics: false });
    const b = createMetrics({ defaultMetrics: false });
    const app = tinyApp(a);
    await app.request('/v1/elements', { method: 'BREW' });
    expect(parse(await b.registry.metrics()).samples.filter((s) => s.name === 'http_requests_total')).toEqual(
      [],
    );
    expect(
      sample(parse(await a.registry.metrics()), 'http_requests_total', {
        method: 'OTHER',
        route: 'unmatched',
      }),
    ).toBe(1);
  });

  it('labels a rate-limited request with its endpoint and status 429', async () => {
    const metrics = createMetrics({ defaultMetrics: false });
    const app = new Hono();
    app.use('*', middlewareChain([metricsMiddleware(metrics)]));
    app.use(
      '/v1/*',
      middlewareChain(
        [rateLimitMiddleware(new MemoryRateLimiter(), { perIp: { limit: 1, windowSeconds: 60 } })],
        (e, c) => handleError(e, c, () => {}),
      ),
    );
    app.get('/v1/elements/:symbol', (c) => c.json({ ok: true }));
    await app.request('/v1/elements/H');
    await app.request('/v1/elements/He');
    const parsed = parse(await metrics.registry.metrics());
    expect(sample(parsed, 'http_requests_total', { route: '/v1/elements/:symbol', status: '429' })).toBe(1);
  });
});

describe('the request metrics, against prom-client', () => {
  it("export the very text prom-client's Counter and Histogram export for the same requests", async () => {
    const ours = createMetrics({ defaultMetrics: false });
    const registry = new Registry();
    const labelNames = ['method', 'route', 'status'] as const;
    const counter = new Counter({
      name: 'http_requests_total',
      help: 'HTTP requests answered, by method, matched route pattern and status.',
      labelNames,
      registers: [registry],
    });
    const histogram = new Histogram({
      name: 'http_request_duration_seconds',
      help: ours.duration.help,
      labelNames,
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    });
    new Gauge({
      name: 'snapshot_info',
      help: 'The data snapshot being served (value 1, version in the data_version label).',
      labelNames: ['data_version'],
      registers: [registry],
    });
    // Durations on, between and past the bounds, over routes, statuses and methods seen in any order.
    const seconds = [0, 0.001, 0.0011, 0.003, 0.0999, 0.1, 0.7, 2.5, 9.99, 10, 11, 0.25];
    const calls = seconds.flatMap((s, i) => [
      ['GET', i % 3 ? '/v1/elements/:symbol' : 'unmatched', i % 4 ? 200 : 404, s] as const,
      ['POST', '/v1/lab/run', 402, s / 3] as const,
    ]);
    for (const [method, route, status, s] of calls) {
      ours.answered(method, route, status, s);
      counter.inc({ method, route, status: String(status) });
      histogram.observe({ method, route, status: String(status) }, s);
    }
    expect(await ours.registry.metrics()).toBe(await registry.metrics());
    expect(await ours.registry.getMetricsAsJSON()).toEqual(await registry.getMetricsAsJSON());
  });
});
