import type { Context, Handler } from 'hono';
import { matchedRoutes } from 'hono/route';
import type { RouterRoute } from 'hono/types';
import { Counter, collectDefaultMetrics, Gauge, Registry } from 'prom-client';
import { FastPathContext } from './fast-path/fast-path.js';
import { LabelledHistogram } from './fast-path/histogram.js';
import type { Middleware } from './middleware.js';

/** Seconds; fine at the low end, where a read-only API over a local snapshot spends its time. */
const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** The label for requests that matched no endpoint, so unknown paths cannot add series. */
const UNMATCHED_ROUTE = 'unmatched';

export interface Metrics {
  registry: Registry;
  requests: Counter<'method' | 'route' | 'status'>;
  duration: LabelledHistogram<'method' | 'route' | 'status'>;
  snapshotInfo: Gauge<'data_version'>;
  /** Sets snapshot_info{data_version=v} to 1, dropping the previous version's series. */
  setDataVersion(version: string | null): void;
  /** Counts and times one answered request. */
  answered(method: string, route: string, status: number, seconds: number): void;
}

/**
 * A registry of its own (no global state) with the HTTP metrics, snapshot_info and process
 * metrics. Those include the event-loop delay (perf_hooks.monitorEventLoopDelay, sampled every
 * 10 ms): nodejs_eventloop_lag_{p50,p90,p99,max,mean}_seconds over the interval since the last
 * scrape, the figure that shows one slow request holding up every other.
 */
export function createMetrics(options: { defaultMetrics?: boolean } = {}): Metrics {
  const registry = new Registry();
  if (options.defaultMetrics ?? true)
    collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 10 });
  const labelNames = ['method', 'route', 'status'] as const;
  // Every answered request is one observation of the duration histogram, so the request counter
  // is that histogram's count per series, read when scraped (the histogram is made below):
  // nothing to count twice per request.
  const requests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests answered, by method, matched route pattern and status.',
    labelNames,
    registers: [registry],
    collect() {
      this.reset();
      for (const series of duration.allSeries()) this.inc(series.labels, series.count);
    },
  });
  // Registered after the counter: /metrics lists them in that order.
  const duration = new LabelledHistogram<(typeof labelNames)[number]>(
    'http_request_duration_seconds',
    'Time to answer HTTP requests, by method, matched route pattern and status.',
    DURATION_BUCKETS,
    registry,
  );
  const snapshotInfo = new Gauge({
    name: 'snapshot_info',
    help: 'The data snapshot being served (value 1, version in the data_version label).',
    labelNames: ['data_version'] as const,
    registers: [registry],
  });
  return {
    registry,
    requests,
    duration,
    snapshotInfo,
    setDataVersion(version) {
      snapshotInfo.reset();
      if (version) snapshotInfo.set({ data_version: version }, 1);
    },
    answered(method, route, status, seconds) {
      // The series is found by one string, its labels made once (the set is bounded like the labels).
      const series = duration.series(`${method} ${status} ${route}`, () => ({
        method,
        route,
        status: String(status),
      }));
      duration.observe(series, seconds);
    },
  };
}

/** What the last comparison of the payments ledger with the chain found (payment-service.ts `reconcile`). */
interface LedgerMismatches {
  transfersWithoutRow: readonly unknown[];
  settledWithoutTransfer: readonly unknown[];
}

/**
 * x402_ledger_mismatches{kind}: transfers to the service with no settled row, and settled rows with
 * no transfer, as the last comparison with the chain found them (absent until one has run).
 */
export function watchLedger(metrics: Metrics, found: () => LedgerMismatches | null): void {
  const name = 'x402_ledger_mismatches';
  if (metrics.registry.getSingleMetric(name)) return;
  new Gauge({
    name,
    help: 'Payments ledger against the chain at the last comparison: transfers without a settled row, settled rows without a transfer.',
    labelNames: ['kind'] as const,
    registers: [metrics.registry],
    collect() {
      this.reset();
      const m = found();
      if (!m) return;
      this.set({ kind: 'transfer_without_settled_row' }, m.transfersWithoutRow.length);
      this.set({ kind: 'settled_row_without_transfer' }, m.settledWithoutTransfer.length);
    },
  });
}

/**
 * The route pattern a request matched (`/v1/elements/:symbol`), never its raw path: the most
 * specific endpoint among the matched routes, or `unmatched` when only middleware matched.
 */
export function routeLabel(c: Context): string {
  // A request the fast path answered was not routed by Hono: the route its cached answer was made by.
  if ((c as unknown) instanceof FastPathContext)
    return (c as unknown as FastPathContext).route ?? UNMATCHED_ROUTE;
  let routes: RouterRoute[];
  try {
    routes = matchedRoutes(c);
  } catch {
    return UNMATCHED_ROUTE;
  }
  for (let i = routes.length - 1; i >= 0; i--) {
    const route = routes[i];
    if (route && route.method !== 'ALL') return route.path;
  }
  return UNMATCHED_ROUTE;
}

const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/**
 * Counts and times every request, a middleware of the app's chain (middleware.ts); put it first so it
 * sees every answer, errors and 429s too.
 */
export function metricsMiddleware(metrics: Metrics): Middleware {
  return onAnswered((c, status, ms) =>
    metrics.answered(
      KNOWN_METHODS.has(c.req.method) ? c.req.method : 'OTHER',
      routeLabel(c),
      status,
      ms / 1000,
    ),
  );
}

/**
 * A middleware that calls `done` once a request is answered, with its status and its duration in
 * milliseconds: the metrics and the request log both time requests so.
 */
export function onAnswered(done: (c: Context, status: number, ms: number) => void): Middleware {
  // Each instance keeps its start under its own name in the context.
  const started = `answeredStart${instances++}`;
  type Timed = Context<{ Variables: Record<string, number> }>;
  return {
    enter(c) {
      (c as Timed).set(started, performance.now());
      return undefined;
    },
    exit(c) {
      done(c, c.res.status, performance.now() - (c as Timed).get(started));
    },
  };
}
let instances = 0;

/**
 * GET /metrics: the registry in Prometheus text format. With `dataVersion`, snapshot_info is
 * brought up to date on every scrape (e.g. `() => snapshots.version`), so no publish hook is needed.
 */
export function metricsHandler(
  metrics: Metrics,
  options: { dataVersion?: () => string | null } = {},
): Handler {
  let last: string | null | undefined;
  return async (c) => {
    if (options.dataVersion) {
      const version = options.dataVersion();
      if (version !== last) metrics.setDataVersion(version);
      last = version;
    }
    return c.body(await metrics.registry.metrics(), 200, {
      'content-type': metrics.registry.contentType,
      'cache-control': 'no-store',
    });
  };
}
