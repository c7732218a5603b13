/**
 * `ri tag`: titles on stdin, one per line; one JSON array of element symbols per line on stdout,
 * in input order. Output is buffered into large chunks (one write per ~64 KB) so a million titles
 * cost a few hundred writes, and we wait for 'drain' when stdout pushes back.
 */
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { TAGGER_VERSION, tagElements } from '../tagging/tagger.js';

const USAGE = `usage: ri tag < titles.txt > tags.jsonl

Reads paper titles from stdin, one per line, and writes for each line a JSON array of the
element symbols it names as a subject (headline elements, sorted by atomic number), e.g.
  Iron oxide nanoparticles   ->  ["O","Fe"]
  Lead to better results     ->  []
Tagger rules version ${TAGGER_VERSION}; see src/tagging/tagger.ts.
`;

const CHUNK = 64 * 1024;

export async function run(args: string[]): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) {
    process.stdout.write(USAGE);
    return 0;
  }
  if (args.length > 0) {
    process.stderr.write(`ri tag: unexpected argument '${args[0]}'\n\n${USAGE}`);
    return 2;
  }
  const out = process.stdout;
  const lines = createInterface({ input: process.stdin, crlfDelay: Number.POSITIVE_INFINITY });
  let buffer = '';
  for await (const line of lines) {
    buffer += `${JSON.stringify(tagElements(line))}\n`;
    if (buffer.length >= CHUNK) {
      const ok = out.write(buffer);
      buffer = '';
      if (!ok) await once(out, 'drain');
    }
  }
  if (buffer.length > 0 && !out.write(buffer)) await once(out, 'drain');
  return 0;
}
