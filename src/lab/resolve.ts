/**
 * Resolves the terms of a parsed lab query against the data: element symbols and names, topic
 * names, keyword names, and wildcards over topic names. A term the data does not know is kept
 * with no subjects, so the quote can list it under `ignored` (never dropped silently).
 */
import { ELEMENTS, type Element } from '../elements/elements.js';
import type { LabIndex, SubjectRef } from './lab-index.js';
import type { Clause, LabQuery, Term } from './query-ast.js';
import { canonicalTermText, MIN_WILDCARD_PREFIX, printTerm } from './query-parser.js';

/** Topic names a wildcard expands to, at most (a limit the interface publishes). */
const MAX_WILDCARD_EXPANSION = 25;

export interface ResolvedTerm {
  /** The term in canonical form (`Fe`, `"oxygen evolution"`, `perov*`). */
  term: string;
  position: number;
  subjects: SubjectRef[];
  /** For a wildcard: how many topic names matched, and whether the list was cut at 25. */
  expansion?: { matched: number; truncated: boolean };
}

export type ResolvedClause =
  | { kind: 'require' | 'exclude'; clause: Clause; term: ResolvedTerm }
  | { kind: 'any'; clause: Clause; terms: ResolvedTerm[] }
  | { kind: 'year'; clause: Clause; from: number | null; to: number | null };

const BY_SYMBOL = new Map(ELEMENTS.map((e) => [e.symbol, e]));
const BY_NAME = new Map<string, Element>(
  ELEMENTS.flatMap((e) => [e.name.toLowerCase(), ...e.variants].map((n) => [n, e] as const)),
);

function elementRef(index: LabIndex, e: Element): SubjectRef {
  return {
    type: 'element',
    id: e.symbol,
    name: e.name,
    paperCount: index.postings({ type: 'element', id: e.symbol }).length,
  };
}

/** Topic names with a word starting with the prefix, most papers first, at most 25. */
function expandWildcard(index: LabIndex, prefix: string): { subjects: SubjectRef[]; matched: number } {
  const p = prefix.toLowerCase();
  const matches = index.topics.filter((t) => t.words.some((w) => w.startsWith(p))).map((t) => t.ref);
  return { subjects: matches.slice(0, MAX_WILDCARD_EXPANSION), matched: matches.length };
}

function resolveTerm(index: LabIndex, term: Term): ResolvedTerm {
  const base = { term: printTerm(term), position: term.pos };
  if (term.kind === 'wildcard') {
    const { subjects, matched } = expandWildcard(index, term.prefix);
    return { ...base, subjects, expansion: { matched, truncated: matched > subjects.length } };
  }
  const text = canonicalTermText(term);
  // A symbol only as written (Fe, Co): "co", "in", "as" are words, not elements.
  const element = (term.kind === 'word' ? BY_SYMBOL.get(text) : undefined) ?? BY_NAME.get(text.toLowerCase());
  if (element) return { ...base, subjects: [elementRef(index, element)] };
  return { ...base, subjects: index.byName.get(text.toLowerCase()) ?? [] };
}

export function resolveQuery(index: LabIndex, query: LabQuery): ResolvedClause[] {
  return query.clauses.map((clause): ResolvedClause => {
    if (clause.kind === 'any')
      return { kind: 'any', clause, terms: clause.terms.map((t) => resolveTerm(index, t)) };
    if (clause.kind === 'year') return { kind: 'year', clause, from: clause.from, to: clause.to };
    return { kind: clause.kind, clause, term: resolveTerm(index, clause.term) };
  });
}

/** Every term of the resolved query, in order. */
export function resolvedTerms(clauses: ResolvedClause[]): ResolvedTerm[] {
  return clauses.flatMap((c) => (c.kind === 'any' ? c.terms : c.kind === 'year' ? [] : [c.term]));
}

/** Why a term was ignored, and names that may be what was meant. */
export function explainUnknown(index: LabIndex, t: ResolvedTerm): { reason: string; suggestions: string[] } {
  const bare = t.term.replace(/^"|"$|\*$/g, '');
  const lower = bare.toLowerCase();
  const suggestions: string[] = [];
  const element = ELEMENTS.find((e) => e.symbol.toLowerCase() === lower);
  if (element) suggestions.push(element.symbol, element.name.toLowerCase());
  if (lower.length >= MIN_WILDCARD_PREFIX) {
    for (const [name, refs] of index.byName) {
      if (suggestions.length >= 5) break;
      if (name.includes(lower)) suggestions.push(`"${refs[0]!.name.toLowerCase()}"`);
    }
  }
  const reason = t.term.endsWith('*')
    ? `no topic name has a word starting with '${bare}'`
    : element
      ? `'${bare}' is not an element symbol as written (symbols are case-sensitive: ${element.symbol})`
      : `'${bare}' is not an element, topic or keyword name in this data`;
  return { reason, suggestions };
}
