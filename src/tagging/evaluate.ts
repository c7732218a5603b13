/**
 * Precision and recall of the element tagger against hand-labelled titles, micro-averaged over
 * (title, symbol) pairs: a symbol the tagger gives and the label lacks is a false positive.
 */
import { createHash } from 'node:crypto';
import { tagElements } from './tagger.js';

export interface LabelledTitle {
  title: string;
  elements: string[];
  note?: string;
}

interface Score {
  tp: number;
  fp: number;
  fn: number;
  precision: number;
  recall: number;
}

interface Failure {
  title: string;
  expected: string[];
  got: string[];
  missing: string[];
  extra: string[];
}

export interface Evaluation {
  perElement: Record<string, Score>;
  overall: Score;
  failures: Failure[];
  rows: number;
}

function score(tp: number, fp: number, fn: number): Score {
  // no predictions is perfect precision; nothing to find is perfect recall
  return {
    tp,
    fp,
    fn,
    precision: tp + fp === 0 ? 1 : tp / (tp + fp),
    recall: tp + fn === 0 ? 1 : tp / (tp + fn),
  };
}

export function evaluateTagger(
  rows: readonly LabelledTitle[],
  tagger: (title: string) => string[] = tagElements,
): Evaluation {
  const counts = new Map<string, { tp: number; fp: number; fn: number }>();
  const bump = (symbol: string, key: 'tp' | 'fp' | 'fn') => {
    let c = counts.get(symbol);
    if (!c) {
      c = { tp: 0, fp: 0, fn: 0 };
      counts.set(symbol, c);
    }
    c[key]++;
  };
  const failures: Failure[] = [];
  for (const row of rows) {
    const got = tagger(row.title);
    const expected = new Set(row.elements);
    const gotSet = new Set(got);
    const missing = row.elements.filter((s) => !gotSet.has(s));
    const extra = got.filter((s) => !expected.has(s));
    for (const s of got) bump(s, expected.has(s) ? 'tp' : 'fp');
    for (const s of missing) bump(s, 'fn');
    if (missing.length > 0 || extra.length > 0) {
      failures.push({ title: row.title, expected: row.elements, got, missing, extra });
    }
  }
  const perElement: Record<string, Score> = {};
  let tp = 0;
  let fp = 0;
  let fn = 0;
  for (const [symbol, c] of [...counts].sort((a, b) => a[0].localeCompare(b[0]))) {
    perElement[symbol] = score(c.tp, c.fp, c.fn);
    tp += c.tp;
    fp += c.fp;
    fn += c.fn;
  }
  return { perElement, overall: score(tp, fp, fn), failures, rows: rows.length };
}

/** Parse JSON lines of labelled titles; blank lines are skipped. */
export function parseLabelledTitles(text: string): LabelledTitle[] {
  const rows: LabelledTitle[] = [];
  for (const [i, line] of text.split('\n').entries()) {
    if (line.trim() === '') continue;
    const value = JSON.parse(line) as Partial<LabelledTitle>;
    if (typeof value.title !== 'string' || !Array.isArray(value.elements)) {
      throw new Error(`line ${i + 1}: expected {"title": string, "elements": string[]}`);
    }
    rows.push({ title: value.title, elements: value.elements.map(String), note: value.note });
  }
  return rows;
}

/** Share of the labelled titles held back from tuning, in percent. */
export const HELD_BACK_PERCENT = 30;

/**
 * Whether a labelled title belongs to the held-back part: fixed by a hash of the title, so a row
 * keeps its part when rows are added, and the rules are tuned on the other part only.
 */
export function isHeldBack(title: string): boolean {
  return createHash('sha256').update(title).digest().readUInt32BE(0) % 100 < HELD_BACK_PERCENT;
}

/** The labelled titles split into the tuning part and the held-back part. */
export function splitLabelled(rows: readonly LabelledTitle[]): {
  tuning: LabelledTitle[];
  heldBack: LabelledTitle[];
} {
  const tuning: LabelledTitle[] = [];
  const heldBack: LabelledTitle[] = [];
  for (const row of rows) (isHeldBack(row.title) ? heldBack : tuning).push(row);
  return { tuning, heldBack };
}
