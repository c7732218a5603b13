import { watch } from 'node:fs';
import { parseArgs } from 'node:util';
import { loadConfig } from '../config/config.js';
import { dataPaths } from '../config/paths.js';
import { expandWorksPaths } from '../ingest/sources.js';
import { readPointerName } from '../snapshot/folder.js';
import { CliError } from './cli-error.js';
import { runBuild, runIngest } from './pipeline.js';
import { parseFilter, parseSince, runPull } from './pull.js';

const USAGE = `usage: ri update PATH... [--watch] [--interval SECONDS] [--topics FILE] [--data-dir DIR]
       ri update --pull [--every DURATION] [--since DATE] [--filter F] [--topics FILE] [--data-dir DIR]

Ingest + build + publish. With --watch, keeps following the folders given and ingests new
partitions (works/updated_date=YYYY-MM-DD/part_*.gz) as they appear, then publishes again; it
looks for them when the folders change and every --interval seconds (default 5). --topics FILE:
the OpenAlex topic taxonomy (default: the bundled one).

With --pull, reads new and changed works from the OpenAlex API instead (as \`ri pull\`), then
builds and publishes. With --every (e.g. 30m, 6h, 1d), does so again after each such interval
until stopped (Ctrl-C); a pull that fails is tried again at the next one.`;

const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 };

/** --every: a number with a unit (s, m, h, d), in milliseconds. */
export function parseEvery(value: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*([smhd])$/.exec(value.trim());
  const ms = m ? Number(m[1]) * UNIT_SECONDS[m[2]!]! * 1000 : Number.NaN;
  if (!(ms >= 1000 && ms <= 2 ** 31 - 1)) {
    throw new CliError(`--every must be a duration such as 90s, 30m, 6h or 1d (1s to 24d), got '${value}'`);
  }
  return ms;
}

export async function run(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      watch: { type: 'boolean' },
      interval: { type: 'string', default: '5' },
      pull: { type: 'boolean' },
      every: { type: 'string' },
      since: { type: 'string' },
      filter: { type: 'string' },
      topics: { type: 'string' },
      'data-dir': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (values.pull) {
    if (positionals.length > 0 || values.watch)
      throw new CliError('--pull reads the API: give it no PATH and no --watch');
    return updateByPulling(values);
  }
  for (const flag of ['every', 'since', 'filter'] as const)
    if (values[flag] !== undefined) throw new CliError(`--${flag} goes with --pull`);
  if (positionals.length === 0) throw new CliError(`no PATH given\n${USAGE}`);
  const interval = Number(values.interval);
  if (!Number.isFinite(interval) || interval <= 0)
    throw new CliError(`--interval must be a positive number of seconds`);
  const dataDir = values['data-dir'] ?? loadConfig().DATA_DIR;

  // Files already taken, by path and size: a part that is still being written is taken again when it grows.
  const seen = new Map<string, number>();
  const newFiles = () => expandWorksPaths(positionals).filter((f) => seen.get(f.path) !== f.bytes);
  const cycle = async (paths: string[]) => {
    await runIngest(dataDir, paths, values.topics ?? null, { tag: false });
    const result = await runBuild(dataDir);
    process.stdout.write(`${result.version}\n`);
  };

  const first = newFiles();
  for (const f of first) seen.set(f.path, f.bytes);
  await cycle(first.map((f) => f.path));
  if (!values.watch) return 0;

  process.stderr.write(`update: watching ${positionals.join(' ')} for new partitions (Ctrl-C to stop)\n`);
  let busy = false;
  let again = false;
  const check = async () => {
    if (busy) {
      again = true;
      return;
    }
    busy = true;
    try {
      do {
        again = false;
        const fresh = newFiles();
        if (fresh.length === 0) continue;
        for (const f of fresh) seen.set(f.path, f.bytes);
        process.stderr.write(`update: ${fresh.length} new file(s)\n`);
        await cycle(fresh.map((f) => f.path));
      } while (again);
    } catch (e) {
      process.stderr.write(`update: ${(e as Error).message}; will retry\n`);
    } finally {
      busy = false;
    }
  };
  const watchers = positionals.map((p) => {
    try {
      return watch(p, { recursive: true }, () => void check());
    } catch {
      return null;
    }
  });
  const timer = setInterval(() => void check(), interval * 1000);
  await new Promise<void>((resolve) => {
    const stop = () => {
      clearInterval(timer);
      for (const w of watchers) w?.close();
      resolve();
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  return 0;
}

/** `ri update --pull [--every D]`: pull, build, publish; on a schedule with --every. */
async function updateByPulling(values: {
  every?: string;
  since?: string;
  filter?: string;
  topics?: string;
  'data-dir'?: string;
}): Promise<number> {
  const every = values.every === undefined ? null : parseEvery(values.every);
  const since = values.since === undefined ? null : parseSince(values.since);
  const filter = values.filter === undefined ? undefined : parseFilter(values.filter);
  const dataDir = values['data-dir'] ?? loadConfig().DATA_DIR;
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  let lastCycleBuilt = false;
  try {
    for (let first = true; ; first = false) {
      try {
        // --since and --filter start the first pull; the next ones go on from where it ended.
        const pulled = await runPull(dataDir, {
          since: first ? since : null,
          filter: first ? filter : undefined,
          topics: values.topics ?? null,
          signal: stop.signal,
        });
        const c = pulled.counts;
        const current = readPointerName(dataPaths(dataDir).snapshots, 'CURRENT');
        // A cycle that brought nothing after one that published keeps the snapshot (the first always
        // builds: a `ri pull` or a failed cycle before it may have left the corpus ahead of it).
        if (lastCycleBuilt && c.kept + c.replaced + c.removed === 0 && current) {
          process.stderr.write(`update: nothing new; snapshot ${current} stays current\n`);
          process.stdout.write(`${current}\n`);
        } else {
          const result = await runBuild(dataDir);
          process.stdout.write(`${result.version}\n`);
        }
        lastCycleBuilt = true;
      } catch (e) {
        lastCycleBuilt = false;
        if (stop.signal.aborted && e instanceof CliError && e.exitCode === 130) {
          // Stopped mid-pull: what it read is merged and the cursor kept for the next run.
          process.stderr.write('update: stopped; the next pull goes on from where this one stopped\n');
          return 0;
        }
        if (every === null || stop.signal.aborted || !(e instanceof CliError) || e.exitCode === 2) throw e;
        process.stderr.write(`update: ${e.message.replace(/^pull: /, 'pull failed: ')}\n`);
      }
      if (every === null || stop.signal.aborted) return 0;
      process.stderr.write(`update: next pull in ${values.every} (Ctrl-C to stop)\n`);
      const waited = await new Promise<boolean>((resolve) => {
        const onAbort = () => {
          clearTimeout(timer);
          resolve(false);
        };
        const timer = setTimeout(() => {
          stop.signal.removeEventListener('abort', onAbort);
          resolve(true);
        }, every);
        stop.signal.addEventListener('abort', onAbort, { once: true });
      });
      if (!waited) return 0;
    }
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
