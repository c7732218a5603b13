/**
 * Facts the docs repeat from the code, checked against it, so the prose cannot drift: the error
 * table of docs/api.md against the codes src/core/errors.ts declares, the configuration table of
 * docs/operations.md against the variables src/config/config.ts reads, the paper fields of
 * docs/api.md against PaperSchema (and research's against ResearchPaperSchema), and the prices and limits the pages state against the access
 * table (src/access/policy.ts). Files and pure modules only (the unit tier).
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_PAPER_LIMIT,
  ELEMENT_HISTORY_USD,
  LAB_DEPTHS,
  LAB_LICENCE_ABOVE,
  LAB_QUOTE_USD,
  LAB_SAMPLE_ABOVE,
  MAX_PAPER_LIMIT,
  PLAN_RATE_LIMITS,
} from '../../../src/access/policy.js';
import { PaperSchema } from '../../../src/contracts/common.js';
import { ResearchPaperSchema } from '../../../src/contracts/research.js';
import { ERROR_CODES } from '../../../src/core/errors.js';

const ROOT = resolve(import.meta.dirname, '../../..');
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

/** The text under a `## heading`, up to the next heading of that level or higher. */
function section(markdown: string, heading: string): string {
  const start = markdown.indexOf(`\n## ${heading}\n`);
  if (start < 0) throw new Error(`no "## ${heading}" section`);
  return markdown.slice(start + heading.length + 5).split(/\n#{1,2} /)[0] ?? '';
}

/** A markdown table's rows as trimmed cells (header and ruler dropped). */
function rows(text: string): string[][] {
  return text
    .split('\n')
    .filter((line) => line.startsWith('|') && !/^\|[\s|:-]+\|$/.test(line))
    .map((line) =>
      line
        .split('|')
        .slice(1, -1)
        .map((cell) => cell.trim()),
    )
    .slice(1);
}

/** The names in backticks of a cell (`PORT`, `A`, `B`). */
const named = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);

/** Every number the pattern's first group captures in the text ("1,200" read as 1200). */
function stated(text: string, pattern: RegExp): number[] {
  return [...text.matchAll(new RegExp(pattern, 'g'))].map((m) => Number(m[1]!.replace(/,/g, '')));
}

const sorted = (names: Iterable<string>) => [...names].sort();

describe('docs repeat the code', () => {
  it("docs/api.md's error table has every code the code declares, each with its status", () => {
    const documented = new Map<string, number>();
    for (const [status, codes] of rows(section(read('docs/api.md'), 'Errors'))) {
      for (const code of named(codes ?? '')) documented.set(code, Number(status));
    }
    expect(sorted(documented.keys())).toEqual(sorted(ERROR_CODES.map((e) => e.code)));
    for (const { code, status } of ERROR_CODES) expect(documented.get(code), code).toBe(status);
  });

  it("docs/operations.md's configuration table names exactly the variables config.ts reads", () => {
    const source = read('src/config/config.ts');
    const schema = source.slice(source.indexOf('const EnvSchema = z.object({'));
    const declared = [...schema.slice(0, schema.indexOf('\n});')).matchAll(/^ {2}([A-Z][A-Z0-9_]*):/gm)].map(
      (m) => m[1]!,
    );
    expect(declared.length).toBeGreaterThan(10);
    const documented = rows(section(read('docs/operations.md'), 'Configuration')).flatMap(([v]) =>
      named(v ?? ''),
    );
    expect(sorted(documented)).toEqual(sorted(declared));
  });

  it("docs/operations.md's configuration defaults are config.ts's literal defaults", () => {
    const source = read('src/config/config.ts');
    const schema = source.slice(source.indexOf('const EnvSchema = z.object({'));
    const body = schema.slice(0, schema.indexOf('\n});'));
    // Each variable's declaration, up to the next one; its literal default, where it has one.
    const parts = body.split(/^ {2}(?=[A-Z][A-Z0-9_]*:)/m).slice(1);
    const defaults = parts.flatMap((part) => {
      const name = /^([A-Z][A-Z0-9_]*):/.exec(part)![1]!;
      const literal = /\.default\((?:'([^']+)'|([\d_]+))\)/.exec(part);
      if (!literal) return [];
      return [[name, literal[1] ?? literal[2]!.replace(/_/g, '')] as const];
    });
    expect(defaults.length).toBeGreaterThan(10);
    const table = rows(section(read('docs/operations.md'), 'Configuration'));
    for (const [name, value] of defaults) {
      const row = table.find(([v]) => named(v ?? '').includes(name));
      expect(row?.[1], name).toContain(value);
    }
  });

  it("docs/api.md's paper fields are PaperSchema's keys", () => {
    const documented = rows(section(read('docs/api.md'), 'Papers')).flatMap(([field]) => named(field ?? ''));
    expect(sorted(documented)).toEqual(sorted(Object.keys(PaperSchema.shape)));
  });

  it("docs/api.md's research paper record is ResearchPaperSchema's keys", () => {
    const sentence = /A paper of a reading list\s+carries ([^;]+);/.exec(
      section(read('docs/api.md'), 'Research'),
    );
    expect(sorted(named(sentence![1]!))).toEqual(sorted(Object.keys(ResearchPaperSchema.shape)));
  });

  it("the prices and limits the pages state are the access table's", () => {
    const api = read('docs/api.md');
    expect(stated(api, /`papers_20` (\d+\.\d+) USD/)).toEqual([LAB_DEPTHS.papers_20.usd]);
    expect(stated(api, /`papers_100` (\d+\.\d+) USD/)).toEqual([LAB_DEPTHS.papers_100.usd]);
    expect(stated(api, /minus the (\d+\.\d+) USD the quote cost/)).toEqual([LAB_QUOTE_USD]);
    expect(stated(read('docs/lab.md'), /minus the (\d+\.\d+) USD quote price/)).toEqual([LAB_QUOTE_USD]);
    expect(stated(api, /3 symbols: (\d+\.\d+) USD/)).toEqual([Number((3 * ELEMENT_HISTORY_USD).toFixed(2))]);
    expect(stated(read('docs/payments.md'), /Fe\/history'\);\s*\/\/ (\d+\.\d+) USD/)).toEqual([
      ELEMENT_HISTORY_USD,
    ]);
    expect(stated(api, /fixed sample of [\d,]+ above ([\d,]+) matches/)).toEqual([LAB_SAMPLE_ABOVE]);
    expect(stated(api, /(?:licence` \(|quote )above ([\d,]+) matches/)).toEqual([
      LAB_LICENCE_ABOVE,
      LAB_LICENCE_ABOVE,
    ]);
    expect(stated(api, /`limit` 1-(\d+)/)).toEqual([MAX_PAPER_LIMIT]);
    expect(stated(api, /`limit` 1-\d+ \(default (\d+)\)/)).toEqual([DEFAULT_PAPER_LIMIT]);
    const plans = [PLAN_RATE_LIMITS.free, PLAN_RATE_LIMITS.personal, PLAN_RATE_LIMITS.professional];
    const rates = [
      ...read('docs/operations.md').matchAll(
        /free\s+([\d,]+), Personal\s+([\d,]+), Professional\s+([\d,]+)/g,
      ),
    ].map((m) => m.slice(1).map((n) => Number(n.replace(/,/g, ''))));
    expect(rates).toEqual([plans, plans]);
  });
});
