import { parseArgs } from 'node:util';
import { loadConfig } from '../config/config.js';
import { dataPaths } from '../config/paths.js';
import { rollback } from '../snapshot-build/publish.js';
import { CliError, printedHelp } from './cli-error.js';

const USAGE = `usage: ri rollback [--data-dir DIR]

Publishes the previous snapshot again: the one that was current before the current one. It
becomes current (a running 'ri serve' switches to it) and heads the publication log
(/v1/versions, published_at now), as any publish; the one rolled back from becomes the previous,
so a second rollback returns to it. Prints the version now current.`;

export async function run(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: { 'data-dir': { type: 'string' }, help: { type: 'boolean', short: 'h' } },
  });
  if (printedHelp(values, USAGE)) return 0;
  const result = rollback(dataPaths(values['data-dir'] ?? loadConfig().DATA_DIR).snapshots);
  if (!result) throw new CliError('there is no previous snapshot to roll back to', 1);
  process.stderr.write(`rollback: now serving ${result.version} (was ${result.previous})\n`);
  process.stdout.write(`${result.version}\n`);
  return 0;
}
