/**
 * Matching a resolved lab query: a paper matches when it is mapped to every required term (to
 * any of the subjects the term names), to at least one term of each OR group, to no excluded
 * term, and was published within the year range. Terms the data does not know take no part.
 */
import type { LabIndex } from './lab-index.js';
import type { ResolvedClause, ResolvedTerm } from './resolve.js';
import { difference, filterRange, intersectAll, type Postings, unionAll } from './sets.js';

const known = (t: ResolvedTerm) => t.subjects.length > 0;

function termPostings(index: LabIndex, t: ResolvedTerm): Postings {
  return unionAll(t.subjects.map((s) => index.postings(s)));
}

/** Whether the clause narrows the match to papers mapped to something (a usable positive clause). */
export function isPositive(c: ResolvedClause): boolean {
  return (c.kind === 'require' && known(c.term)) || (c.kind === 'any' && c.terms.some(known));
}

/** The matching papers (ordinals ascending); empty when no positive clause is usable. */
export function matchClauses(index: LabIndex, clauses: ResolvedClause[]): Postings {
  const positive: Postings[] = [];
  const excluded: Postings[] = [];
  for (const c of clauses) {
    if (c.kind === 'require' && known(c.term)) positive.push(termPostings(index, c.term));
    else if (c.kind === 'any' && c.terms.some(known))
      positive.push(unionAll(c.terms.filter(known).map((t) => termPostings(index, t))));
    else if (c.kind === 'exclude' && known(c.term)) excluded.push(termPostings(index, c.term));
  }
  if (positive.length === 0) return new Int32Array(0);
  let matches = intersectAll(positive);
  if (excluded.length > 0) matches = difference(matches, unionAll(excluded));
  for (const c of clauses) {
    // Year 0 is "unknown": no year filter keeps it, open-ended or not.
    if (c.kind === 'year') matches = filterRange(matches, index.year, c.from ?? 1, c.to);
  }
  return matches;
}
