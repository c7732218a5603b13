/**
 * The project's own imports, as the house tests read them: every relative import, export-from and
 * dynamic import of a source file of src/ (type-only ones too), and the worker files started by
 * path (`new URL('../../house/x.js', import.meta.url)`).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

export const ROOT = resolve(import.meta.dirname, '../../..');
export const SRC = join(ROOT, 'src');

export function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sourceFiles(path));
    else if (path.endsWith('.ts') && !path.endsWith('.test.ts')) out.push(path);
  }
  return out;
}

const MODULE_IMPORTS = [
  /\b(?:import|export)\s[^'"`;]*?\bfrom\s+['"](\.{1,2}\/[^'"]+)['"]/g,
  /\bimport\s+['"](\.{1,2}\/[^'"]+)['"]/g,
  /\bimport\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g,
];
const WORKER_FILES = /\bnew URL\(\s*['"](\.{1,2}\/[^'"]+\.js)['"]\s*,\s*import\.meta\.url/g;

/**
 * Relative module specifiers of static and dynamic imports and re-exports; with `workers`, also
 * of the worker files a module starts by path (a dependency, but not one its module graph loads).
 */
export function importsOf(source: string, options: { workers?: boolean } = {}): string[] {
  const found: string[] = [];
  const patterns = options.workers === false ? MODULE_IMPORTS : [...MODULE_IMPORTS, WORKER_FILES];
  for (const pattern of patterns) for (const m of source.matchAll(pattern)) if (m[1]) found.push(m[1]);
  return found;
}

/** Each source file of src/ (relative to src/) with the files of src/ it imports. */
export function importGraph(options: { workers?: boolean } = {}): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const file of sourceFiles(SRC)) {
    const targets = new Set<string>();
    for (const spec of importsOf(readFileSync(file, 'utf8'), options)) {
      const target = relative(SRC, resolve(dirname(file), spec)).replace(/\.js$/, '.ts');
      if (!target.startsWith('..')) targets.add(target);
    }
    graph.set(relative(SRC, file), targets);
  }
  return graph;
}

/**
 * The cycles of a graph, one per strongly connected component of more than one node (or a node
 * that imports itself), each as a path that comes back to where it starts: `a -> b -> a`.
 */
export function cyclesOf(graph: ReadonlyMap<string, ReadonlySet<string>>): string[] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || graph.get(v)?.has(v)) components.push(component);
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v);
  return components.map((component) => {
    // The shortest way back to the component's first node (by name), through the component.
    const inside = new Set(component);
    const start = [...component].sort()[0]!;
    const from = new Map<string, string>();
    const queue = [start];
    for (let i = 0; i < queue.length; i++) {
      const v = queue[i]!;
      for (const w of [...(graph.get(v) ?? [])].sort()) {
        if (!inside.has(w) || from.has(w)) continue;
        from.set(w, v);
        if (w === start) break;
        queue.push(w);
      }
      if (from.has(start)) break;
    }
    const between: string[] = [];
    for (let v = from.get(start)!; v !== start; v = from.get(v)!) between.unshift(v);
    return [start, ...between, start].join(' -> ');
  });
}
