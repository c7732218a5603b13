/**
 * `ri generate --works N [--seed S] --out DIR [--topics PATH]`: a deterministic synthetic OpenAlex
 * corpus in the snapshot layout (DIR/works/updated_date=YYYY-MM-DD/part_NNN.gz), for benchmarks.
 */
import { parseArgs } from 'node:util';
import { BUNDLED_SAMPLE } from '../config/paths.js';
import { generateCorpus, OutputNotEmptyError, type PartResult } from '../synthetic/generate.js';
import { CliError, parsedOrCliError, printedHelp } from './cli-error.js';

const USAGE = `usage: ri generate --works N --out DIR [--seed S] [--topics PATH] [--workers W] [--force]

Write N synthetic OpenAlex works (gzip JSON lines) to DIR/works/updated_date=YYYY-MM-DD/part_NNN.gz.
The same N and seed always give the same bytes.

  --works N       number of distinct works (required)
  --out DIR       output folder (required); DIR/works must be empty or absent
  --seed S        integer seed (default 1)
  --topics PATH   OpenAlex topic table (default: the bundled fixtures/openalex/topics.json)
  --workers W     worker threads (default 2)
  --force         replace an existing DIR/works
  --help          this text`;

function integer(name: string, value: string, min: number, max: number): number {
  if (!/^-?\d+$/.test(value.replace(/_/g, '')))
    throw new CliError(`--${name} must be an integer, got '${value}'`);
  const n = Number(value.replace(/_/g, ''));
  if (!Number.isSafeInteger(n) || n < min || n > max)
    throw new CliError(`--${name} must be between ${min} and ${max}, got '${value}'`);
  return n;
}

function mb(bytes: number): string {
  return `${(bytes / 1e6).toFixed(1)} MB`;
}

export async function run(args: string[]): Promise<number> {
  const { values } = parsedOrCliError(
    () =>
      parseArgs({
        args,
        options: {
          works: { type: 'string' },
          seed: { type: 'string', default: '1' },
          out: { type: 'string' },
          // The bundled table, wherever the command is run from.
          topics: { type: 'string', default: BUNDLED_SAMPLE.topics },
          workers: { type: 'string', default: '2' },
          force: { type: 'boolean', default: false },
          help: { type: 'boolean', short: 'h', default: false },
        },
        allowPositionals: false,
        strict: true,
      }),
    (m) => `generate: ${m.split('\n')[0]}`,
  );
  if (printedHelp(values, USAGE)) return 0;
  if (values.works === undefined) throw new CliError('generate: --works N is required');
  if (values.out === undefined || values.out === '') throw new CliError('generate: --out DIR is required');
  const works = integer('works', String(values.works), 1, 100_000_000);
  const seed = integer('seed', String(values.seed), 0, 0xffffffff);
  const workers = integer('workers', String(values.workers), 0, 64);
  const topicsPath = String(values.topics);
  const outDir = String(values.out);

  const tty = process.stderr.isTTY === true;
  const onPart = (r: PartResult, done: number, total: number): void => {
    const line = `generate: ${done}/${total} ${r.path} ${r.works} works ${mb(r.bytes)}`;
    if (tty) process.stderr.write(`\r\x1b[K${line}`);
    else process.stderr.write(`${line}\n`);
  };
  let summary: Awaited<ReturnType<typeof generateCorpus>>;
  try {
    summary = await generateCorpus({
      works,
      seed,
      outDir,
      topicsPath,
      workers,
      force: values.force === true,
      onPart,
    });
  } catch (error) {
    if (error instanceof OutputNotEmptyError) throw new CliError(`generate: ${error.message}`);
    if ((error as NodeJS.ErrnoException).code === 'ENOENT')
      throw new CliError(`generate: ${(error as Error).message}`);
    if (error instanceof SyntaxError || /topics/.test((error as Error).message)) {
      throw new CliError(`generate: ${(error as Error).message}`);
    }
    throw error;
  }
  if (tty) process.stderr.write('\n');
  const rate = Math.round(summary.lines / summary.seconds);
  process.stderr.write(
    `generate: ${summary.works} works (${summary.lines} records), ${summary.files} files in ${summary.partitions} partitions, ` +
      `${mb(summary.rawBytes)} JSON, ${mb(summary.bytes)} gzip, ${summary.seconds.toFixed(1)} s (${rate} works/s)\n`,
  );
  return 0;
}
