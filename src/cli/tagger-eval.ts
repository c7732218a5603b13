/** `ri tagger-eval [file]`: precision and recall of the element tagger on hand-labelled titles. */
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import {
  type Evaluation,
  evaluateTagger,
  HELD_BACK_PERCENT,
  parseLabelledTitles,
  splitLabelled,
} from '../tagging/evaluate.js';
import { TAGGER_VERSION } from '../tagging/tagger.js';

const DEFAULT_FIXTURE = 'fixtures/tagger/labelled-titles.jsonl';

const USAGE = `usage: ri tagger-eval [file] [--failures]

Scores the element tagger against hand-labelled titles (JSON lines {"title", "elements"}),
default ${DEFAULT_FIXTURE} relative to the current directory. The titles are split by a hash
of the title into a tuning part and a held-back part (${HELD_BACK_PERCENT}%); the rules are tuned on the
tuning part only. Prints precision and recall per element on the tuning part, and overall
(micro-averaged over title-symbol pairs) on each part. --failures lists the tuning titles
where the tagger and the label disagree (the held-back ones are only counted).
`;

const pct = (x: number) => `${(x * 100).toFixed(1)}%`.padStart(7);

function overallLine(name: string, e: Evaluation): string {
  const o = e.overall;
  return `${name.padEnd(10)}${String(e.rows).padStart(5)} titles  tp=${o.tp} fp=${o.fp} fn=${o.fn}  precision=${(o.precision * 100).toFixed(2)}%  recall=${(o.recall * 100).toFixed(2)}%`;
}

export async function run(args: string[]): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) {
    process.stdout.write(USAGE);
    return 0;
  }
  const showFailures = args.includes('--failures');
  const file = args.find((a) => !a.startsWith('--')) ?? DEFAULT_FIXTURE;
  const rows = parseLabelledTitles(await readFile(resolve(process.cwd(), file), 'utf8'));
  const { tuning, heldBack } = splitLabelled(rows);
  const tuned = evaluateTagger(tuning);
  const held = evaluateTagger(heldBack);
  const lines: string[] = [`tagger v${TAGGER_VERSION} on ${rows.length} titles (${file})`, ''];
  lines.push('tuning part, per element:');
  lines.push(
    `${'element'.padEnd(8)}${'tp'.padStart(6)}${'fp'.padStart(6)}${'fn'.padStart(6)}  precision  recall`,
  );
  for (const [symbol, s] of Object.entries(tuned.perElement)) {
    lines.push(
      `${symbol.padEnd(8)}${String(s.tp).padStart(6)}${String(s.fp).padStart(6)}${String(s.fn).padStart(6)}  ${pct(s.precision)}    ${pct(s.recall)}`,
    );
  }
  lines.push('', overallLine('tuning', tuned), overallLine('held-back', held));
  if (showFailures) {
    lines.push('', `${tuned.failures.length} tuning titles disagree (${held.failures.length} held back):`);
    for (const f of tuned.failures) {
      lines.push(
        `  ${JSON.stringify(f.title)}  missing=[${f.missing.join(',')}] extra=[${f.extra.join(',')}]`,
      );
    }
  }
  process.stdout.write(`${lines.join('\n')}\n`);
  return 0;
}
