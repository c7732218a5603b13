/** `ri tagger-eval [file]`: precision and recall of the element tagger on hand-labelled titles. */
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { evaluateTagger, parseLabelledTitles } from '../tagging/evaluate.js';
import { TAGGER_VERSION } from '../tagging/tagger.js';

const DEFAULT_FIXTURE = 'fixtures/tagger/labelled-titles.jsonl';

const USAGE = `usage: ri tagger-eval [file] [--failures]

Scores the element tagger against hand-labelled titles (JSON lines {"title", "elements"}),
default ${DEFAULT_FIXTURE} relative to the current directory. Prints precision and recall
per element and overall (micro-averaged over title-symbol pairs). --failures lists the titles
where the tagger and the label disagree.
`;

const pct = (x: number) => `${(x * 100).toFixed(1)}%`.padStart(7);

export async function run(args: string[]): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) {
    process.stdout.write(USAGE);
    return 0;
  }
  const showFailures = args.includes('--failures');
  const file = args.find((a) => !a.startsWith('--')) ?? DEFAULT_FIXTURE;
  const rows = parseLabelledTitles(await readFile(resolve(process.cwd(), file), 'utf8'));
  const result = evaluateTagger(rows);
  const lines: string[] = [`tagger v${TAGGER_VERSION} on ${rows.length} titles (${file})`, ''];
  lines.push(
    `${'element'.padEnd(8)}${'tp'.padStart(6)}${'fp'.padStart(6)}${'fn'.padStart(6)}  precision  recall`,
  );
  for (const [symbol, s] of Object.entries(result.perElement)) {
    lines.push(
      `${symbol.padEnd(8)}${String(s.tp).padStart(6)}${String(s.fp).padStart(6)}${String(s.fn).padStart(6)}  ${pct(s.precision)}    ${pct(s.recall)}`,
    );
  }
  const o = result.overall;
  lines.push('');
  lines.push(
    `overall  tp=${o.tp} fp=${o.fp} fn=${o.fn}  precision=${(o.precision * 100).toFixed(2)}%  recall=${(o.recall * 100).toFixed(2)}%`,
  );
  if (showFailures) {
    lines.push('', `${result.failures.length} titles disagree:`);
    for (const f of result.failures) {
      lines.push(
        `  ${JSON.stringify(f.title)}  missing=[${f.missing.join(',')}] extra=[${f.extra.join(',')}]`,
      );
    }
  }
  process.stdout.write(`${lines.join('\n')}\n`);
  return 0;
}
