import { parseArgs } from 'node:util';
import { loadConfig } from '../config/config.js';
import { dataPaths } from '../config/paths.js';
import { rollback } from '../snapshot-build/publish.js';
import { CliError } from './cli-error.js';

export async function run(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: { 'data-dir': { type: 'string' }, help: { type: 'boolean', short: 'h' } },
  });
  if (values.help) {
    process.stdout.write('usage: ri rollback [--data-dir DIR]\n\nServes the previous snapshot again.\n');
    return 0;
  }
  const result = rollback(dataPaths(values['data-dir'] ?? loadConfig().DATA_DIR).snapshots);
  if (!result) throw new CliError('there is no previous snapshot to roll back to', 1);
  process.stderr.write(`rollback: now serving ${result.version} (was ${result.previous})\n`);
  process.stdout.write(`${result.version}\n`);
  return 0;
}
