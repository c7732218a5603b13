import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../config/config.js';
import { storeOptions } from '../config/memory-budget.js';
import { BUNDLED_SAMPLE, dataPaths } from '../config/paths.js';
import { openCorpusStore } from '../ingest/corpus-store.js';
import { OpenAlexClient } from '../ingest/openalex-client.js';
import {
  PAGES_PER_BATCH,
  PER_PAGE,
  PullStoppedError,
  type PullSummary,
  PullUsageError,
  pull,
} from '../ingest/openalex-pull.js';
import { readTaxonomy } from '../ingest/taxonomy.js';
import { CliError, parsedOrCliError, printedHelp } from './cli-error.js';
import { formatCounts, runTag } from './pipeline.js';
import { ingestProgressReporter } from './progress.js';

const USAGE = `usage: ri pull [--since DATE] [--filter F] [--data-dir DIR]

Reads new and changed works from the OpenAlex API (/works, filter=from_updated_date:DATE,
cursor paging, 200 a page) into the corpus store in DATA_DIR, through the same ingest as
\`ri ingest\`. Where it stands is kept in DATA_DIR/pull/state.json: an interrupted pull goes on
from its last merged page, and the next pull starts at the newest updated_date the last one read.
Then \`ri build\` publishes (or \`ri update --pull\` does all of it).

  --since DATE          works updated on or after DATE (YYYY-MM-DD or YYYY-MM-DDTHH:MM[:SS]);
                        required on the first pull, default: where the last pull ended
  --filter F            an OpenAlex works filter added to it, e.g. type:article (kept for the
                        next pulls; --filter '' drops it)
  --topics FILE         the topic taxonomy (default: the bundled one)
  --retries N           retries of a failing page, with backoff and Retry-After (default 5)
  --pages-per-batch N   pages merged at a time, at least (default 500: 100,000 works); an
                        interrupted pull reads the pages after its last merge again
  --data-dir DIR        default DATA_DIR

The API is OPENALEX_API_URL (default https://api.openalex.org), with OPENALEX_API_KEY sent as
api_key when set.`;

export interface PullRunOptions {
  since?: string | null;
  filter?: string | null;
  topics?: string | null;
  retries?: number;
  pagesPerBatch?: number;
  signal?: AbortSignal;
}

const SINCE = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,6})?)?Z?)?$/;

/** --since as OpenAlex takes it (a date or a date-time), or a one-line error. */
export function parseSince(value: string): string {
  const m = SINCE.exec(value.trim());
  const [y, mo, d, h = '0', mi = '0', s = '0'] = (m?.slice(1) ?? []).map((v) => v ?? '0');
  const date = m ? new Date(Date.UTC(Number(y), Number(mo) - 1, Number(d))) : null;
  if (
    !m ||
    date!.getUTCMonth() !== Number(mo) - 1 ||
    date!.getUTCDate() !== Number(d) ||
    Number(h) > 23 ||
    Number(mi) > 59 ||
    Number(s) > 59
  ) {
    throw new CliError(
      `--since must be a date YYYY-MM-DD or a date-time YYYY-MM-DDTHH:MM[:SS], got '${value}'`,
    );
  }
  return value.trim();
}

/** --filter: OpenAlex `key:value` clauses, comma-separated; from_updated_date is --since's. */
export function parseFilter(value: string): string | null {
  const f = value.trim();
  if (f === '') return null;
  for (const clause of f.split(',')) {
    const key = clause.split(':')[0]!.trim();
    if (!/^[a-z_.]+$/.test(key) || !clause.includes(':') || clause.endsWith(':')) {
      throw new CliError(`--filter must be OpenAlex filters key:value[,key:value...], got '${value}'`);
    }
    if (key === 'from_updated_date') throw new CliError('--filter cannot set from_updated_date: use --since');
  }
  return f;
}

function integerOption(name: string, value: string | undefined, fallback: number, min: number): number {
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value) || Number(value) < min) {
    throw new CliError(`--${name} must be an integer of at least ${min}, got '${value}'`);
  }
  return Number(value);
}

export function formatPullSummary(s: PullSummary): string {
  return `pull: ${s.pages} page(s) in ${s.seconds.toFixed(1)} s: ${formatCounts(s.counts)}`;
}

/** Pulls into the corpus store of dataDir, reporting on stderr; user-caused failures are CliErrors. */
export async function runPull(dataDir: string, options: PullRunOptions = {}): Promise<PullSummary> {
  const env = loadConfig();
  const { root, corpus } = dataPaths(dataDir);
  mkdirSync(root, { recursive: true });
  const topics = options.topics ?? (existsSync(BUNDLED_SAMPLE.topics) ? BUNDLED_SAMPLE.topics : null);
  let store: Awaited<ReturnType<typeof openCorpusStore>>;
  try {
    store = await openCorpusStore(corpus, storeOptions(env.BUILD_MEMORY_MB));
  } catch (e) {
    throw new CliError(`cannot open the corpus store ${corpus}: ${(e as Error).message.split('\n')[0]}`, 1);
  }
  try {
    if (topics) await store.loadTaxonomy(readTaxonomy(topics));
  } catch (e) {
    throw new CliError(`cannot read the topics ${topics}: ${(e as Error).message.split('\n')[0]}`, 2);
  } finally {
    store.close();
  }

  const baseUrl = env.OPENALEX_API_URL.replace(/\/+$/, '');
  if (!/^https?:\/\//.test(baseUrl))
    throw new CliError(`OPENALEX_API_URL must be an http(s) URL, got '${baseUrl}'`, 1);
  const client = new OpenAlexClient({
    baseUrl,
    apiKey: env.OPENALEX_API_KEY ?? null,
    retries: options.retries,
    onRetry: (line) => process.stderr.write(`${line}\n`),
  });
  const progress = ingestProgressReporter(process.stderr, { command: 'pull', parts: 'pages' });
  const report = (s: PullSummary) => {
    progress.stop();
    for (const b of s.badRecords.slice(0, 100))
      process.stderr.write(`pull: page ${b.page}, record ${b.record}: ${b.reason}\n`);
    process.stderr.write(`${formatPullSummary(s)}\n`);
  };
  // The tag step follows the merge, as after `ri ingest` (ingest -> tag -> build).
  const tag = async (s: PullSummary) => {
    s.tagged = await runTag(dataDir);
  };
  try {
    const summary = await pull(client, corpus, join(root, 'pull'), {
      since: options.since,
      filter: options.filter,
      pagesPerBatch: options.pagesPerBatch,
      signal: options.signal,
      onLog: (line) => process.stderr.write(`${line}\n`),
      onDebug: process.env.RI_VERBOSE ? (line) => process.stderr.write(`pull: ${line}\n`) : undefined,
      onProgress: (p) => {
        const total = Math.max(p.total ?? p.records, p.records);
        progress.update({
          bytes: p.records,
          totalBytes: total,
          read: p.records,
          filesDone: p.pages,
          files: Math.max(p.pages, Math.ceil(total / PER_PAGE)),
        });
      },
    });
    progress.stop();
    await tag(summary);
    report(summary);
    process.stderr.write(
      `pull: works updated since ${summary.since} read to the end; the next pull starts at ${summary.nextSince}\n`,
    );
    return summary;
  } catch (e) {
    if (e instanceof PullStoppedError) {
      progress.stop();
      if (e.summary.pages > 0) {
        await tag(e.summary);
        report(e.summary);
      }
      const resume = e.summary.pages > 0 ? '; `ri pull` goes on from the last page read' : '';
      throw new CliError(`pull: ${e.message}${resume}`, e.message === 'interrupted' ? 130 : 1);
    }
    progress.stop();
    if (e instanceof PullUsageError) throw new CliError(`pull: ${e.message}`, 2);
    throw e;
  } finally {
    client.close();
  }
}

export async function run(args: string[]): Promise<number> {
  const { values } = parsedOrCliError(
    () =>
      parseArgs({
        args,
        options: {
          since: { type: 'string' },
          filter: { type: 'string' },
          topics: { type: 'string' },
          retries: { type: 'string' },
          'pages-per-batch': { type: 'string' },
          'data-dir': { type: 'string' },
          help: { type: 'boolean', short: 'h' },
        },
      }),
    (m) => `pull: ${m.split('\n')[0]}\n${USAGE}`,
  );
  if (printedHelp(values, USAGE)) return 0;
  const since = typeof values.since === 'string' ? parseSince(values.since) : null;
  const filter = typeof values.filter === 'string' ? parseFilter(values.filter) : undefined;
  const retries = integerOption('retries', values.retries as string | undefined, 5, 0);
  const pagesPerBatch = integerOption(
    'pages-per-batch',
    values['pages-per-batch'] as string | undefined,
    PAGES_PER_BATCH,
    1,
  );
  const dataDir = (values['data-dir'] as string | undefined) ?? loadConfig().DATA_DIR;

  const stop = new AbortController();
  const onSignal = () => {
    process.stderr.write('pull: stopping after the page being read (the pages read are kept)\n');
    stop.abort();
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    await runPull(dataDir, {
      since,
      filter,
      topics: (values.topics as string | undefined) ?? null,
      retries,
      pagesPerBatch,
      signal: stop.signal,
    });
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
  return 0;
}
