import { parseArgs } from 'node:util';
import { loadConfig } from '../config/config.js';
import { runBuild } from './pipeline.js';

const USAGE = `usage: ri build [--data-dir DIR]

Scores the corpus store and publishes a new snapshot (one immutable SQLite file per
data_version); the previous snapshot is kept for \`ri rollback\`.`;

export async function run(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: { 'data-dir': { type: 'string' }, help: { type: 'boolean', short: 'h' } },
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const result = await runBuild(values['data-dir'] ?? loadConfig().DATA_DIR);
  process.stdout.write(`${result.version}\n`);
  return 0;
}
