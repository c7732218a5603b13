import type { ElementAnswer, ElementListAnswer, ElementScore } from '../contracts/elements.js';
import { ELEMENTS, findElement } from '../elements/elements.js';
import type { ElementRow, SnapshotView, SubjectQueries } from '../snapshot/reader.js';
import { ServiceError } from './errors.js';
import { envelope, type Viewer } from './viewer.js';

/** The answers' types, inferred from their contracts (src/contracts/elements.ts): they cannot drift. */
export type { ElementAnswer, ElementListAnswer, ElementScore } from '../contracts/elements.js';

type ElementsView = SnapshotView<Pick<SubjectQueries, 'elementRows'>>;

/** All 118 elements' rows, read once per snapshot. */
function elementRows(snapshot: ElementsView): Map<string, ElementRow> {
  return snapshot.memoize('element-rows', () => new Map(snapshot.reader.elementRows().map((r) => [r.id, r])));
}

function toScore(row: ElementRow, viewer: Viewer): ElementScore {
  const extra = JSON.parse(row.extra) as { number: number; group: number | null; period: number };
  return {
    symbol: row.id,
    name: row.name,
    atomic_number: extra.number,
    group: extra.group,
    period: extra.period,
    ri: row.ri,
    ris: row.ris,
    hri: viewer.hriAvailable ? row.hri : null,
    paper_count: row.paper_count,
    canonical_url: `${viewer.publicUrl}/elements/${row.id}`,
  };
}

/** All 118 elements by atomic number; or, for a batch, the symbols asked for in their order. */
export function listElements(
  snapshot: ElementsView,
  viewer: Viewer,
  symbols?: readonly string[],
): ElementListAnswer {
  const rows = elementRows(snapshot);
  const elements = symbols
    ? symbols.map((s) => toScore(elementRow(snapshot, s), viewer))
    : [...rows.values()].map((r) => toScore(r, viewer)).sort((a, b) => a.atomic_number - b.atomic_number);
  return { elements, count: elements.length, ...envelope(snapshot, viewer, '/elements') };
}

/**
 * The symbols of a batch (`Fe,ni, Co`): canonical, in the order given, each once, at most `max`
 * (400 beyond). Symbols that name no element are one 404 unknown_symbol naming every one of
 * them, each with suggestions.
 */
export function batchSymbols(list: string, max = ELEMENTS.length): string[] {
  const items = list
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  if (items.length === 0) {
    throw new ServiceError('invalid_parameter', "Parameter 'symbols': give element symbols, e.g. Fe,Ni,Co.", {
      parameter: 'symbols',
    });
  }
  const unknown = [...new Set(items.filter((s) => !findElement(s)))];
  if (unknown.length > 0) {
    throw new ServiceError(
      'unknown_symbol',
      `Not the symbol of a chemical element: ${unknown.map((s) => `'${s}'`).join(', ')}.`,
      {
        parameter: 'symbols',
        unknown,
        suggestions: unknown.map((symbol) => ({ symbol, suggestions: suggestSymbols(symbol) })),
      },
    );
  }
  const symbols = [...new Set(items.map((s) => findElement(s)!.symbol))];
  if (symbols.length > max) {
    throw new ServiceError(
      'invalid_parameter',
      `Parameter 'symbols': at most ${max} elements per call (${symbols.length} given).`,
      { parameter: 'symbols' },
    );
  }
  return symbols;
}

const BY_SYMBOL = new Map(ELEMENTS.map((e) => [e.symbol, e]));
const BY_NAME = new Map(
  ELEMENTS.flatMap((e) => [e.name.toLowerCase(), ...e.variants].map((n) => [n, e] as const)),
);
/** Symbols that are everyday words too ("In situ", "As grown"): an element only as the whole query. */
const WORD_SYMBOLS = new Set(['In', 'As', 'Be', 'He', 'I', 'No', 'At', 'Am', 'Pa', 'Ho', 'Re']);

/**
 * The symbols of the elements a free-text query names, in the order named: a word that is an
 * element's name or spelling variant (iron, Aluminum, sulphur), or its symbol as written (Fe, Co:
 * "co" is a word, as in the lab's terms). A query of one word may give the symbol in any case
 * (fe); a symbol that is also a word (In, As, He) names its element only as the whole query.
 * Their scores: listElements with these symbols.
 */
export function symbolsNamedIn(q: string): string[] {
  const words = q.split(/[^\p{L}\p{N}]+/u).filter((w) => w.length > 0);
  const alone = words.length === 1;
  const symbols: string[] = [];
  for (const w of words) {
    const bySymbol = BY_SYMBOL.get(w) ?? (alone ? findElement(w) : undefined);
    const symbolOk =
      bySymbol !== undefined &&
      (alone ? w === bySymbol.symbol || !WORD_SYMBOLS.has(bySymbol.symbol) : !WORD_SYMBOLS.has(w));
    const e = BY_NAME.get(w.toLowerCase()) ?? (symbolOk ? bySymbol : undefined);
    if (e && !symbols.includes(e.symbol)) symbols.push(e.symbol);
  }
  return symbols;
}

/** One element by symbol, matched case-insensitively and answered in its canonical form. */
export function getElement(snapshot: ElementsView, symbol: string, viewer: Viewer): ElementAnswer {
  const row = elementRow(snapshot, symbol);
  const { canonical_url: _, ...rest } = envelope(snapshot, viewer, `/elements/${row.id}`);
  return { ...toScore(row, viewer), ...rest };
}

/** The canonical symbol of an element, or a 404 unknown_symbol with suggestions. */
export function canonicalSymbol(symbol: string): string {
  const element = findElement(symbol);
  if (!element) {
    throw new ServiceError('unknown_symbol', `'${symbol}' is not the symbol of a chemical element.`, {
      suggestions: suggestSymbols(symbol),
    });
  }
  return element.symbol;
}

function elementRow(snapshot: ElementsView, symbol: string): ElementRow {
  const canonical = canonicalSymbol(symbol);
  const row = elementRows(snapshot).get(canonical);
  if (!row) throw new ServiceError('data_unavailable', `The snapshot has no row for ${canonical}.`);
  return row;
}

/** "Did you mean": symbols one edit away, and an element whose name was typed in place of its symbol. */
function suggestSymbols(input: string): string[] {
  const lower = input.trim().toLowerCase();
  const byName = ELEMENTS.filter((e) => e.name.toLowerCase() === lower || e.variants.includes(lower));
  if (byName.length) return byName.map((e) => e.symbol);
  if (lower.length > 3)
    return ELEMENTS.filter((e) => e.name.toLowerCase().startsWith(lower.slice(0, 4)))
      .map((e) => e.symbol)
      .slice(0, 3);
  return ELEMENTS.filter((e) => editDistanceAtMostOne(e.symbol.toLowerCase(), lower))
    .map((e) => e.symbol)
    .slice(0, 5);
}

function editDistanceAtMostOne(a: string, b: string): boolean {
  if (a === b) return true;
  if (Math.abs(a.length - b.length) > 1) return false;
  let i = 0;
  let j = 0;
  let edits = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      i++;
      j++;
      continue;
    }
    if (++edits > 1) return false;
    if (a.length > b.length) i++;
    else if (b.length > a.length) j++;
    else {
      i++;
      j++;
    }
  }
  return edits + (a.length - i) + (b.length - j) <= 1;
}
