/**
 * Readings of a parsed lab query that only the tests need: its canonical text, and its clauses by
 * kind. The service reads the clauses where it resolves them (src/lab/resolve.ts).
 */
import type { LabQuery, Term } from '../../src/lab/query-ast.js';
import { parseLabQuery, printLabQuery } from '../../src/lab/query-parser.js';

/** A year clause's bounds, inclusive; null for open. */
interface YearFilter {
  from: number | null;
  to: number | null;
}

/** The canonical form of a query string (the form echoed back and keyed on). */
export function normaliseLabQuery(input: string): string {
  return printLabQuery(parseLabQuery(input));
}

/** Required single terms (not the OR groups), in input order. */
export function requiredTerms(q: LabQuery): Term[] {
  return q.clauses.flatMap((c) => (c.kind === 'require' ? [c.term] : []));
}

/** The OR groups: every match is mapped to at least one term of each group. */
export function alternativeGroups(q: LabQuery): Term[][] {
  return q.clauses.flatMap((c) => (c.kind === 'any' ? [c.terms] : []));
}

/** Excluded terms, in input order. */
export function excludedTerms(q: LabQuery): Term[] {
  return q.clauses.flatMap((c) => (c.kind === 'exclude' ? [c.term] : []));
}

/** The year filter (inclusive bounds, null for open), or null when there is none. */
export function yearFilter(q: LabQuery): YearFilter | null {
  for (const c of q.clauses) if (c.kind === 'year') return { from: c.from, to: c.to };
  return null;
}

/** Every term of the query (required, alternatives, excluded), in input order. */
export function allTerms(q: LabQuery): Term[] {
  return q.clauses.flatMap((c) => (c.kind === 'any' ? c.terms : c.kind === 'year' ? [] : [c.term]));
}
