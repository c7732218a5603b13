/**
 * The layers hold: every import from one folder of src/ into another is one that
 * docs/architecture.md ("What each folder may import") allows. The table in the document is the
 * rule, so the picture and the code cannot drift: an import that crosses a line the document does
 * not draw fails here, and so does a folder the document does not name.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cyclesOf, importsOf, ROOT, SRC, sourceFiles } from './imports.js';

/** Files any layer may import: modules that import nothing of the project themselves. */
const LEAVES = new Set(['core/errors.ts', 'scoring/resolutions.ts', 'contracts/data-version.ts']);

interface Rules {
  allowed: Map<string, Set<string>>;
}

/** Reads the table under the heading "What each folder may import": `| folder | may import |`. */
function readRules(markdown: string): Rules {
  const start = markdown.indexOf('## What each folder may import');
  if (start < 0) throw new Error('docs/architecture.md has no "What each folder may import" section');
  const section = markdown.slice(start).split(/\n## /)[0] ?? '';
  const allowed = new Map<string, Set<string>>();
  for (const line of section.split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    if (cells.length < 4) continue;
    // A rule row names its folder in backticks (`core/`); the header and the ruler do not.
    const named = /^`([a-z][a-z-]*)\/?`$/.exec(cells[1] ?? '');
    if (!named?.[1]) continue;
    const folder = named[1];
    const targets = (cells[2] ?? '')
      .replace(/`/g, '')
      .split(/[,\s]+/)
      .map((t) => t.replace(/\/$/, ''))
      .filter((t) => /^[a-z][a-z-]*$/.test(t) && t !== 'nothing');
    allowed.set(folder, new Set(targets));
  }
  return { allowed };
}

interface Edge {
  from: string;
  to: string;
  file: string;
  target: string;
}

function crossFolderImports(): Edge[] {
  const edges: Edge[] = [];
  for (const file of sourceFiles(SRC)) {
    const rel = relative(SRC, file);
    const from = rel.split('/')[0] ?? '';
    if (!rel.includes('/')) continue;
    for (const spec of importsOf(readFileSync(file, 'utf8'))) {
      const target = relative(SRC, resolve(dirname(file), spec)).replace(/\.js$/, '.ts');
      if (target.startsWith('..')) continue;
      const to = target.split('/')[0] ?? '';
      if (to === from || LEAVES.has(target)) continue;
      edges.push({ from, to, file: rel, target });
    }
  }
  return edges;
}

describe('layers (docs/architecture.md, "What each folder may import")', () => {
  const rules = readRules(readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8'));
  const folders = readdirSync(SRC).filter((n) => statSync(join(SRC, n)).isDirectory());

  it('names every folder of src/', () => {
    expect(folders.filter((f) => !rules.allowed.has(f))).toEqual([]);
    expect([...rules.allowed.keys()].filter((f) => !folders.includes(f))).toEqual([]);
  });

  it('has no import across folders that the table does not allow', () => {
    const refused = crossFolderImports()
      .filter((e) => !rules.allowed.get(e.from)?.has(e.to))
      .map((e) => `${e.file} imports ${e.target} (${e.from} may not import ${e.to})`);
    expect(refused).toEqual([]);
  });

  it('allows nothing that is not used (the table says what is, not what might be)', () => {
    const used = new Set(crossFolderImports().map((e) => `${e.from} -> ${e.to}`));
    const unused: string[] = [];
    for (const [from, targets] of rules.allowed) {
      for (const to of targets) if (!used.has(`${from} -> ${to}`)) unused.push(`${from} -> ${to}`);
    }
    expect(unused).toEqual([]);
  });

  it('allows no loop of folders: no pair imports each other, nor any longer loop', () => {
    const loops = (edges: [string, string][]) => {
      const graph = new Map<string, Set<string>>();
      for (const [from, to] of edges) {
        graph.set(from, (graph.get(from) ?? new Set()).add(to));
        if (!graph.has(to)) graph.set(to, new Set());
      }
      // Every pair by name, then one loop of each tangle of folders that is left.
      const pairs = [...graph].flatMap(([from, tos]) =>
        [...tos].filter((to) => from < to && graph.get(to)?.has(from)).map((to) => `${from} <-> ${to}`),
      );
      return [...pairs, ...cyclesOf(graph)];
    };
    // The table refuses them, and so (the table aside) do the imports themselves.
    expect(
      loops([...rules.allowed].flatMap(([from, tos]) => [...tos].map((to): [string, string] => [from, to]))),
    ).toEqual([]);
    expect(loops(crossFolderImports().map((e) => [e.from, e.to]))).toEqual([]);
  });

  it('keeps the leaf modules leaves: they import nothing of the project', () => {
    for (const leaf of LEAVES) {
      expect(importsOf(readFileSync(join(SRC, leaf), 'utf8')), leaf).toEqual([]);
    }
  });

  it('reads the rule table and the imports it checks (a refused import is seen)', () => {
    const table = readRules(
      '## What each folder may import\n| folder | may import |\n|---|---|\n| `a/` | `b/`, `c/` |\n| `b/` | nothing |\n',
    );
    expect([...(table.allowed.get('a') ?? [])]).toEqual(['b', 'c']);
    expect(table.allowed.get('b')?.size).toBe(0);
    expect(
      importsOf(
        "import { x } from '../http/app.js';\nimport type { Y } from './y.js';\nconst m = await import('../cli/serve.js');",
      ),
    ).toEqual(['../http/app.js', './y.js', '../cli/serve.js']);
  });
});
