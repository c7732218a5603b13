/**
 * FTS5 expressions of the shape research builds, taken apart as FTS5's parser takes them: groups
 * ANDed, each group one conjunction of phrases or several ORed (nested ORs flattened); each
 * phrase quoted. What research ranks itself (core/research/title-ranking.ts, topic-search.ts)
 * reads the phrases in the order FTS5 numbers them.
 */

/** A group of the expression: its alternatives, each a conjunction of phrases (the words, unquoted). */
export type Group = string[][];

/** Splits `s` at `sep` where no parenthesis is open. */
function splitTop(s: string, sep: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let quoted = false;
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === '"') quoted = !quoted;
    else if (!quoted && c === '(') depth++;
    else if (!quoted && c === ')') depth--;
    else if (!quoted && depth === 0 && s.startsWith(sep, i)) {
      parts.push(s.slice(start, i));
      start = i + sep.length;
      i += sep.length - 1;
    }
  }
  parts.push(s.slice(start));
  return parts;
}

/** `(x)` -> `x` when the parentheses enclose the whole of it. */
function unwrap(s: string): string | undefined {
  if (!s.startsWith('(') || !s.endsWith(')')) return undefined;
  let depth = 0;
  let quoted = false;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === '"') quoted = !quoted;
    else if (!quoted && c === '(') depth++;
    else if (!quoted && c === ')' && --depth === 0 && i < s.length - 1) return undefined;
  }
  return s.slice(1, -1);
}

export const PHRASE = /^"([^"]*)"$/;

/** The conjunction `"a"` or `("a" AND "b")` as its phrases. */
function conjunction(s: string): string[] | undefined {
  const one = PHRASE.exec(s);
  if (one) return [one[1]!];
  const inner = unwrap(s);
  if (inner === undefined) return undefined;
  const phrases = splitTop(inner, ' AND ').map((p) => PHRASE.exec(p)?.[1]);
  return phrases.every((p) => p !== undefined) ? (phrases as string[]) : undefined;
}

/**
 * `a OR (b OR (c AND d))` as its alternatives [[a], [b], [c, d]]: nested ORs flattened, as FTS5's
 * parser flattens them (the same matches, the same phrases in the same order).
 */
export function alternativesOf(s: string): string[][] | undefined {
  const out: string[][] = [];
  for (const part of splitTop(s, ' OR ')) {
    const phrases = conjunction(part);
    if (phrases) {
      out.push(phrases);
      continue;
    }
    const inner = unwrap(part);
    if (inner === undefined || splitTop(inner, ' OR ').length < 2) return undefined;
    const nested = alternativesOf(inner);
    if (!nested) return undefined;
    out.push(...nested);
  }
  return out;
}

/**
 * The expression's groups, or undefined when it is not of the shape taken here. An OR at the
 * top (the looser search's) is one group of alternatives.
 */
export function parseExpression(expr: string): Group[] | undefined {
  const parts = splitTop(expr, ' AND ');
  if (parts.length === 1 && splitTop(expr, ' OR ').length > 1) {
    const alternatives = alternativesOf(expr);
    return alternatives ? [alternatives] : undefined;
  }
  const groups: Group[] = [];
  for (const part of parts) {
    const phrase = PHRASE.exec(part)?.[1];
    if (phrase !== undefined) {
      groups.push([[phrase]]);
      continue;
    }
    const inner = unwrap(part);
    if (inner === undefined) return undefined;
    const alternatives = alternativesOf(inner);
    if (!alternatives) return undefined;
    groups.push(alternatives);
  }
  return groups;
}

export const quote = (phrases: string[]) =>
  phrases.length === 1 ? `"${phrases[0]}"` : `(${phrases.map((p) => `"${p}"`).join(' AND ')})`;
