import { parseArgs } from 'node:util';
import { loadConfig } from '../config/config.js';
import { parsedOrCliError, printedHelp } from './cli-error.js';
import { runBuild } from './pipeline.js';

const USAGE = `usage: ri build [--full] [--data-dir DIR]

Tags any untagged titles, scores the corpus store and publishes a new snapshot (one immutable
SQLite file per data_version). The last SNAPSHOTS_KEEP published (default 5) are kept, always
the previous one for \`ri rollback\`; older ones are removed.

The build is incremental: it keeps what it read from the corpus store in DATA_DIR/build-cache
and next time reads again only the works changed since. The snapshot is the same, byte for byte,
as a full build's. --full reads the whole corpus store again (and rewrites the cache).`;

export async function run(args: string[]): Promise<number> {
  const { values } = parsedOrCliError(
    () =>
      parseArgs({
        args,
        options: {
          full: { type: 'boolean' },
          'data-dir': { type: 'string' },
          help: { type: 'boolean', short: 'h' },
        },
      }),
    (m) => `build: ${m.split('\n')[0]}\n${USAGE}`,
  );
  if (printedHelp(values, USAGE)) return 0;
  const result = await runBuild(values['data-dir'] ?? loadConfig().DATA_DIR, { full: values.full });
  process.stdout.write(`${result.version}\n`);
  return 0;
}
