import { watch } from 'node:fs';
import { parseArgs } from 'node:util';
import { loadConfig } from '../config/config.js';
import { expandWorksPaths } from '../ingest/sources.js';
import { CliError } from './cli-error.js';
import { runBuild, runIngest } from './pipeline.js';

const USAGE = `usage: ri update PATH... [--watch] [--interval SECONDS] [--data-dir DIR]

Ingest + build + publish. With --watch, keeps following the folders given and ingests new
partitions (works/updated_date=YYYY-MM-DD/part_*.gz) as they appear, then publishes again.`;

export async function run(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      watch: { type: 'boolean' },
      interval: { type: 'string', default: '5' },
      topics: { type: 'string' },
      'data-dir': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (positionals.length === 0) throw new CliError(`no PATH given\n${USAGE}`);
  const interval = Number(values.interval);
  if (!Number.isFinite(interval) || interval <= 0)
    throw new CliError(`--interval must be a positive number of seconds`);
  const dataDir = values['data-dir'] ?? loadConfig().DATA_DIR;

  // Files already taken, by path and size: a part that is still being written is taken again when it grows.
  const seen = new Map<string, number>();
  const newFiles = () => expandWorksPaths(positionals).filter((f) => seen.get(f.path) !== f.bytes);
  const cycle = async (paths: string[]) => {
    await runIngest(dataDir, paths, values.topics ?? null);
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
