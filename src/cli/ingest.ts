import { parseArgs } from 'node:util';
import { loadConfig } from '../config/config.js';
import { CliError, printedHelp } from './cli-error.js';
import { runIngest } from './pipeline.js';

const USAGE = `usage: ri ingest PATH... [--topics FILE] [--data-dir DIR]

Ingests OpenAlex works (JSONL or JSONL.gz files, or folders in the snapshot layout
works/updated_date=YYYY-MM-DD/part_*.gz) into the corpus store in DATA_DIR, then tags the titles
of the new and changed works. Idempotent: a record replaces a stored one only when its
updated_date is newer. --topics FILE: the OpenAlex topic taxonomy (default: the bundled one).
Then \`ri build\` publishes.`;

export async function run(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      topics: { type: 'string' },
      'data-dir': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (printedHelp(values, USAGE)) return 0;
  if (positionals.length === 0) throw new CliError(`no PATH given\n${USAGE}`);
  const config = loadConfig();
  const summary = await runIngest(values['data-dir'] ?? config.DATA_DIR, positionals, values.topics ?? null);
  return summary.fileErrors.length > 0 ? 1 : 0;
}
