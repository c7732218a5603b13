/**
 * The lab filter language: a tokenizer and a recursive-descent parser with positions, a canonical
 * printer, and the helpers the resolver reads. Pure: no data, no I/O.
 *
 * Grammar (whitespace separates tokens; `(`, `)` and `"` also end a word):
 *   query  := clause+
 *   clause := ['+'] term | '-' term | ['+'] group | field
 *   group  := '(' alt ('OR' alt)* ')'        alt := word | phrase | wildcard (no sign, no group)
 *   term   := word | phrase | wildcard       phrase := '"' text '"'      wildcard := word '*'
 *   field  := 'year:' (YYYY | YYYY '..' | '..' YYYY | YYYY '..' YYYY)
 * `OR` (capitals only) is an operator only inside a group. Every unusable query throws
 * LabQueryError, and nothing else is ever thrown.
 */
import type { Clause, LabQuery, Term } from './query-ast.js';

export const MAX_QUERY_LENGTH = 1000;
export const MIN_WILDCARD_PREFIX = 3;

export type LabQueryErrorCode =
  | 'query_empty'
  | 'query_too_long'
  | 'no_required_term'
  | 'unterminated_quote'
  | 'empty_phrase'
  | 'wildcard_in_phrase'
  | 'unclosed_group'
  | 'unmatched_parenthesis'
  | 'empty_group'
  | 'nested_group'
  | 'misplaced_or'
  | 'lowercase_or'
  | 'missing_or'
  | 'operator_word'
  | 'sign_in_group'
  | 'excluded_group'
  | 'dangling_sign'
  | 'double_sign'
  | 'short_wildcard'
  | 'misplaced_wildcard'
  | 'missing_space'
  | 'unknown_field'
  | 'invalid_year'
  | 'reversed_year_range'
  | 'year_in_group'
  | 'signed_year'
  | 'repeated_year'
  | 'conflicting_term'
  | 'internal_error';

/** One edit of the query's text: the UTF-16 range [from, to) replaced by `text`. */
export interface QueryEdit {
  from: number;
  to: number;
  text: string;
}

/**
 * An unusable lab query: what is wrong, where (0-based UTF-16 offset), how to fix it, and, where
 * the suggestion is one definite edit, that edit (`fix`: applyFix gives the corrected query).
 */
export class LabQueryError extends Error {
  override readonly name = 'LabQueryError';

  constructor(
    readonly code: LabQueryErrorCode,
    message: string,
    readonly position: number,
    readonly suggestion: string,
    readonly token?: string,
    readonly fix?: QueryEdit,
  ) {
    super(message);
  }
}

/** The query with an error's fix applied, its spaces tidied (one between words, none at the ends or inside a group's parentheses). */
export function applyFix(input: string, fix: QueryEdit): string {
  return `${input.slice(0, fix.from)}${fix.text}${input.slice(fix.to)}`
    .replace(/\s+/g, ' ')
    .replace(/\( /g, '(')
    .replace(/ \)/g, ')')
    .trim();
}

// ---------------------------------------------------------------------------------------------
// Tokenizer

type Token =
  | { t: 'lparen'; pos: number; end: number }
  | { t: 'rparen'; pos: number; end: number }
  | { t: 'sign'; sign: '+' | '-'; pos: number; end: number }
  | { t: 'phrase'; text: string; pos: number; end: number }
  | { t: 'word'; text: string; pos: number; end: number }
  | { t: 'eof'; pos: number; end: number };

const isSpace = (c: string | undefined): boolean => c !== undefined && /\s/.test(c);
const endsWord = (c: string | undefined): boolean =>
  c === undefined || isSpace(c) || c === '(' || c === ')' || c === '"';

/** The run of non-space text around `pos`, for suggestions that quote a glued name. */
function spanAround(input: string, start: number): string {
  let end = start;
  while (end < input.length && !isSpace(input[end])) end++;
  return input.slice(start, end).replaceAll('"', '');
}

function tokenize(input: string): Token[] {
  const tokens: Token[] = [];
  const n = input.length;
  let i = 0;
  while (i < n) {
    const c = input[i]!;
    if (isSpace(c)) {
      i++;
      continue;
    }
    if (c === '(') {
      tokens.push({ t: 'lparen', pos: i, end: i + 1 });
      i++;
      continue;
    }
    if (c === ')') {
      const next = input[i + 1];
      if (next !== undefined && !isSpace(next) && next !== ')') {
        throw new LabQueryError(
          'missing_space',
          `missing space after ")" at position ${i}`,
          i + 1,
          `put a space after the closing parenthesis: ${input.slice(0, i + 1)} ${input.slice(i + 1)}`.trim(),
          ')',
          { from: i + 1, to: i + 1, text: ' ' },
        );
      }
      tokens.push({ t: 'rparen', pos: i, end: i + 1 });
      i++;
      continue;
    }
    if (c === '+' || c === '-') {
      const next = input[i + 1];
      if (next === undefined || isSpace(next) || next === ')') {
        throw new LabQueryError(
          'dangling_sign',
          `"${c}" at position ${i} has nothing after it`,
          i,
          `write the term right after the sign, with no space (e.g. ${c}oxide), or remove the "${c}"`,
          c,
          { from: i, to: i + 1, text: '' },
        );
      }
      if (next === '+' || next === '-') {
        throw new LabQueryError(
          'double_sign',
          `"${c}${next}" at position ${i}: a term takes one sign only`,
          i,
          `keep one sign: ${next === '-' || c === '-' ? '-' : '+'}${spanAround(input, i + 2)}`,
          `${c}${next}`,
          { from: i, to: i + 2, text: next === '-' || c === '-' ? '-' : '+' },
        );
      }
      tokens.push({ t: 'sign', sign: c, pos: i, end: i + 1 });
      i++;
      continue;
    }
    if (c === '"') {
      const close = input.indexOf('"', i + 1);
      if (close < 0) {
        const rest = input.slice(i + 1).trim();
        throw new LabQueryError(
          'unterminated_quote',
          `unterminated quote starting at position ${i}`,
          i,
          rest === '' ? 'remove the stray quote' : `close the quote: "${rest}"`,
          input.slice(i),
          rest === ''
            ? { from: i, to: i + 1, text: '' }
            : { from: input.trimEnd().length, to: input.length, text: '"' },
        );
      }
      const text = input.slice(i + 1, close);
      if (text.trim() === '') {
        throw new LabQueryError(
          'empty_phrase',
          `empty quotes at position ${i}`,
          i,
          'put a topic name between the quotes, e.g. "perovskite stability", or remove them',
          input.slice(i, close + 1),
          { from: i, to: close + 1, text: '' },
        );
      }
      const star = text.indexOf('*');
      if (star >= 0) {
        throw new LabQueryError(
          'wildcard_in_phrase',
          `"*" at position ${i + 1 + star} is inside quotes: a quoted name is matched exactly`,
          i + 1 + star,
          'use * only on a single unquoted word, e.g. perovskit*',
          input.slice(i, close + 1),
          { from: i, to: close + 1, text: input.slice(i, close + 1).replaceAll('*', '') },
        );
      }
      const after = input[close + 1];
      if (after !== undefined && !isSpace(after) && after !== ')') {
        throw new LabQueryError(
          'missing_space',
          `missing space after the closing quote at position ${close}`,
          close + 1,
          'put a space after the closing quote, or quote the whole name',
          input.slice(i, close + 2),
          { from: close + 1, to: close + 1, text: ' ' },
        );
      }
      tokens.push({ t: 'phrase', text, pos: i, end: close + 1 });
      i = close + 1;
      continue;
    }
    let end = i;
    while (!endsWord(input[end])) end++;
    const text = input.slice(i, end);
    const after = input[end];
    if (after === '(' || after === '"') {
      const name = spanAround(input, i);
      let spanEnd = i;
      while (spanEnd < input.length && !isSpace(input[spanEnd])) spanEnd++;
      throw new LabQueryError(
        'missing_space',
        `missing space before "${after}" at position ${end}`,
        end,
        after === '('
          ? `to search for the name, quote it: "${name}"; to start a group, put a space before the "("`
          : `to search for the name, quote all of it: "${name}"; otherwise put a space before the quote`,
        input.slice(i, end + 1),
        { from: i, to: spanEnd, text: `"${name}"` },
      );
    }
    tokens.push({ t: 'word', text, pos: i, end });
    i = end;
  }
  tokens.push({ t: 'eof', pos: n, end: n });
  return tokens;
}

// ---------------------------------------------------------------------------------------------
// Words: operator, field or term

type WordClass =
  | { c: 'or' }
  | { c: 'reserved'; lower: 'or' | 'and' | 'not' }
  | { c: 'field'; name: string; value: string }
  | { c: 'term'; term: Term };

const RESERVED = new Set(['or', 'and', 'not']);

function codePoints(s: string): number {
  let count = 0;
  for (const _ of s) count++;
  return count;
}

function classify(text: string, pos: number): WordClass {
  if (text === 'OR') return { c: 'or' };
  const lower = text.toLowerCase();
  if (RESERVED.has(lower)) return { c: 'reserved', lower: lower as 'or' | 'and' | 'not' };
  const colon = text.indexOf(':');
  if (colon >= 0) return { c: 'field', name: text.slice(0, colon), value: text.slice(colon + 1) };
  const star = text.indexOf('*');
  if (star < 0) return { c: 'term', term: { kind: 'word', text, pos } };
  if (star !== text.length - 1) {
    const prefix = text.slice(0, star);
    throw new LabQueryError(
      'misplaced_wildcard',
      `"*" at position ${pos + star} is not at the end of the word "${text}"`,
      pos + star,
      codePoints(prefix) >= MIN_WILDCARD_PREFIX
        ? `use * only at the end of a word: ${prefix}*`
        : 'use * only at the end of a word, after at least 3 characters (e.g. perovskit*)',
      text,
      codePoints(prefix) >= MIN_WILDCARD_PREFIX
        ? { from: pos, to: pos + text.length, text: `${prefix}*` }
        : undefined,
    );
  }
  const prefix = text.slice(0, -1);
  if (codePoints(prefix) < MIN_WILDCARD_PREFIX) {
    throw new LabQueryError(
      'short_wildcard',
      `wildcard "${text}" at position ${pos} has fewer than ${MIN_WILDCARD_PREFIX} characters before the "*"`,
      pos,
      prefix === ''
        ? 'write at least 3 characters before the *, e.g. perovskit*'
        : `write at least 3 characters before the *, or drop the * to search for "${prefix}" itself`,
      text,
      prefix === '' ? undefined : { from: pos, to: pos + text.length, text: prefix },
    );
  }
  return { c: 'term', term: { kind: 'wildcard', prefix, pos } };
}

const YEAR_HELP = 'write year:2020, year:2020..2024, year:2020.. or year:..2024';

function parseYear(
  name: string,
  value: string,
  pos: number,
  source: string,
): { from: number | null; to: number | null } {
  if (name.toLowerCase() !== 'year') throw unknownField(name, pos, source);
  const single = /^(\d{4})$/.exec(value);
  if (single) {
    const y = Number(single[1]);
    return { from: y, to: y };
  }
  const range = /^(\d{4})?\.\.(\d{4})?$/.exec(value);
  if (range && (range[1] !== undefined || range[2] !== undefined)) {
    const from = range[1] === undefined ? null : Number(range[1]);
    const to = range[2] === undefined ? null : Number(range[2]);
    if (from !== null && to !== null && from > to) {
      throw new LabQueryError(
        'reversed_year_range',
        `year range "${source}" at position ${pos} ends before it starts`,
        pos,
        `put the earlier year first: year:${range[2]}..${range[1]}`,
        source,
        { from: pos, to: pos + source.length, text: `${name}:${range[2]}..${range[1]}` },
      );
    }
    return { from, to };
  }
  const digitRuns = value.match(/\d+/g) ?? [];
  const why =
    value === ''
      ? 'has no year'
      : /^[\d.]+$/.test(value) && digitRuns.some((d) => d.length !== 4)
        ? 'needs 4-digit years'
        : 'is not a year or a year range';
  throw new LabQueryError('invalid_year', `"${source}" at position ${pos} ${why}`, pos, YEAR_HELP, source);
}

function unknownField(name: string, pos: number, source: string): LabQueryError {
  return new LabQueryError(
    'unknown_field',
    name === ''
      ? `":" at position ${pos} has no field name before it`
      : `unknown field "${name}:" at position ${pos}: the only field is year:`,
    pos,
    `to filter by year, ${YEAR_HELP}; to search for the text itself, quote it: "${source}"`,
    source,
    { from: pos, to: pos + source.length, text: `"${source}"` },
  );
}

// ---------------------------------------------------------------------------------------------
// Canonical text and printing

/** Element-symbol shaped words (Fe, In, I, Co) keep their case; every other text is lower-cased. */
const SYMBOL_SHAPE = /^[A-Z][a-z]?$/;

/** The text a resolver should compare: lower-cased (symbol-shaped words kept), spaces collapsed. */
export function canonicalTermText(term: Term): string {
  switch (term.kind) {
    case 'word':
      return SYMBOL_SHAPE.test(term.text) ? term.text : term.text.toLowerCase();
    case 'phrase':
      return term.text.trim().split(/\s+/).join(' ').toLowerCase();
    case 'wildcard':
      return term.prefix.toLowerCase();
  }
}

/** A term in canonical form: `iron`, `Fe`, `"nickel iron"`, `perov*`. Equal forms mean equal terms. */
export function printTerm(term: Term): string {
  const text = canonicalTermText(term);
  switch (term.kind) {
    case 'word':
      return text;
    case 'phrase':
      return `"${text}"`;
    case 'wildcard':
      return `${text}*`;
  }
}

const printYearNumber = (y: number): string => String(y).padStart(4, '0');

function printYear(from: number | null, to: number | null): string | null {
  if (from === null && to === null) return null;
  if (from !== null && to !== null && from === to) return `year:${printYearNumber(from)}`;
  return `year:${from === null ? '' : printYearNumber(from)}..${to === null ? '' : printYearNumber(to)}`;
}

const unique = (xs: string[]): string[] => [...new Set(xs)];

/**
 * The order of terms in the canonical form (printed terms): by their text without quotes or `*`,
 * then by the printed form. OR alternatives, required terms, OR groups and exclusions are each
 * put in this order: `(Co OR Ni)` and `(Ni OR Co)`, `Fe Ni` and `Ni Fe`, `-Pt -Au` and `-Au -Pt`
 * are one query, with one quote_id.
 */
function compareTerms(a: string, b: string): number {
  const bare = (t: string) => t.replace(/^"|"$|\*$/g, '');
  const [x, y] = [bare(a), bare(b)];
  if (x !== y) return x < y ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The canonical form: required terms, then OR groups (their alternatives, and the groups, in
 * canonical order), then exclusions, each in canonical order (compareTerms), then the year filter;
 * single spaces; duplicates dropped; a one-alternative group printed as a required term.
 */
export function printLabQuery(q: LabQuery): string {
  const required: string[] = [];
  const groups: string[] = [];
  const excluded: string[] = [];
  let year: string | null = null;
  for (const c of q.clauses) {
    switch (c.kind) {
      case 'require':
        required.push(printTerm(c.term));
        break;
      case 'exclude':
        excluded.push(`-${printTerm(c.term)}`);
        break;
      case 'any': {
        const alts = unique(c.terms.map(printTerm)).sort(compareTerms);
        if (alts.length === 1) required.push(alts[0]!);
        else if (alts.length > 1) groups.push(`(${alts.join(' OR ')})`);
        break;
      }
      case 'year':
        year ??= printYear(c.from, c.to);
        break;
    }
  }
  // Sorted, so that the order a query is written in changes neither its text nor its quote_id.
  const byTerm = (a: string, b: string) => compareTerms(a.replace(/^-/, ''), b.replace(/^-/, ''));
  const parts = [
    ...unique(required).sort(compareTerms),
    ...unique(groups).sort(compareTerms),
    ...unique(excluded).sort(byTerm),
  ];
  if (year !== null) parts.push(year);
  return parts.join(' ');
}

// ---------------------------------------------------------------------------------------------
// Parser

class Parser {
  private i = 0;
  private readonly clauses: Clause[] = [];
  private readonly required = new Map<string, number>();
  private readonly excluded = new Map<string, number>();
  private readonly groups = new Set<string>();
  private year: { from: number | null; to: number | null; pos: number; source: string } | null = null;

  constructor(
    private readonly input: string,
    private readonly tokens: Token[],
  ) {}

  private peek(offset = 0): Token {
    return this.tokens[this.i + offset] ?? this.tokens[this.tokens.length - 1]!;
  }

  private source(tok: Token): string {
    return this.input.slice(tok.pos, tok.end);
  }

  /** Source of a token if it is a plain term (for suggestions), else null. */
  private termSource(tok: Token | undefined): string | null {
    if (tok === undefined) return null;
    if (tok.t === 'phrase') return this.source(tok);
    if (
      tok.t === 'word' &&
      tok.text !== 'OR' &&
      !RESERVED.has(tok.text.toLowerCase()) &&
      !tok.text.includes(':')
    )
      return tok.text;
    return null;
  }

  parse(): LabQuery {
    for (;;) {
      const tok = this.peek();
      switch (tok.t) {
        case 'eof':
          return this.finish();
        case 'rparen':
          throw new LabQueryError(
            'unmatched_parenthesis',
            `")" at position ${tok.pos} closes no group`,
            tok.pos,
            'remove it, or open the group with "(" before its alternatives, e.g. (iron OR cobalt)',
            ')',
            { from: tok.pos, to: tok.end, text: '' },
          );
        case 'lparen':
          this.group(tok.pos);
          break;
        case 'sign':
          this.signed(tok);
          break;
        case 'phrase':
          this.i++;
          this.add('require', { kind: 'phrase', text: tok.text, pos: tok.pos }, tok.pos);
          break;
        case 'word':
          this.i++;
          this.word(tok, tok.pos);
          break;
      }
    }
  }

  private signed(sign: Token & { t: 'sign' }): void {
    this.i++;
    const tok = this.peek();
    if (tok.t === 'lparen') {
      if (sign.sign === '-') {
        throw new LabQueryError(
          'excluded_group',
          `"-(" at position ${sign.pos}: a group cannot be excluded`,
          sign.pos,
          'exclude each term on its own, e.g. -oxide -sulfide',
          '-(',
        );
      }
      this.group(sign.pos);
      return;
    }
    this.i++;
    if (tok.t === 'phrase') {
      const term: Term = { kind: 'phrase', text: tok.text, pos: tok.pos };
      this.add(sign.sign === '+' ? 'require' : 'exclude', term, sign.pos);
      return;
    }
    if (tok.t !== 'word') throw internal(sign.pos);
    const cls = classify(tok.text, tok.pos);
    const written = `${sign.sign}${tok.text}`;
    switch (cls.c) {
      case 'or':
      case 'reserved':
        throw new LabQueryError(
          'operator_word',
          `"${written}" at position ${sign.pos}: ${tok.text} is an operator word, not a term`,
          sign.pos,
          'to search for it as a topic name, quote it; OR works only inside a group, e.g. (iron OR cobalt)',
          written,
        );
      case 'field':
        parseYear(cls.name, cls.value, tok.pos, tok.text); // an unknown field or a bad year says so first
        throw new LabQueryError(
          'signed_year',
          `"${written}" at position ${sign.pos}: a year filter takes no sign`,
          sign.pos,
          sign.sign === '+'
            ? `drop the "+": ${tok.text}`
            : 'give the years you want instead, e.g. year:2020..2024, year:2020.. or year:..2019',
          written,
          sign.sign === '+' ? { from: sign.pos, to: sign.end, text: '' } : undefined,
        );
      case 'term':
        this.add(sign.sign === '+' ? 'require' : 'exclude', cls.term, sign.pos);
    }
  }

  private word(tok: Token & { t: 'word' }, clausePos: number): void {
    const cls = classify(tok.text, tok.pos);
    switch (cls.c) {
      case 'or':
      case 'reserved': {
        const prevTok = this.tokens[this.i - 2];
        const nextTok = this.tokens[this.i];
        const prev = this.termSource(prevTok);
        const next = this.termSource(nextTok);
        const lower = cls.c === 'or' ? 'or' : cls.lower;
        if (lower === 'or') {
          throw new LabQueryError(
            'misplaced_or',
            `"${tok.text}" at position ${tok.pos} is outside parentheses: OR works only inside a group`,
            tok.pos,
            prev !== null && next !== null
              ? `put the alternatives in a group: (${prev} OR ${next})`
              : 'put the alternatives in a group, e.g. (iron OR cobalt)',
            tok.text,
            prev !== null && next !== null && this.tokens[this.i - 3]?.t !== 'sign'
              ? { from: prevTok!.pos, to: nextTok!.end, text: `(${prev} OR ${next})` }
              : undefined,
          );
        }
        if (lower === 'and') {
          throw new LabQueryError(
            'operator_word',
            `"${tok.text}" at position ${tok.pos}: every term is already required, there is no AND`,
            tok.pos,
            prev !== null && next !== null
              ? `drop it: ${prev} ${next}`
              : 'drop it: bare terms are all required',
            tok.text,
            { from: tok.pos, to: tok.end, text: '' },
          );
        }
        throw new LabQueryError(
          'operator_word',
          `"${tok.text}" at position ${tok.pos}: there is no NOT, a term is excluded with "-"`,
          tok.pos,
          next !== null ? `write -${next}` : 'write -term to exclude a term, e.g. -oxide',
          tok.text,
          next !== null ? { from: tok.pos, to: nextTok!.pos, text: '-' } : undefined,
        );
      }
      case 'field': {
        const { from, to } = parseYear(cls.name, cls.value, tok.pos, tok.text);
        if (this.year !== null) {
          const lo = from === null || this.year.from === null ? null : Math.min(from, this.year.from);
          const hi = to === null || this.year.to === null ? null : Math.max(to, this.year.to);
          throw new LabQueryError(
            'repeated_year',
            `second year filter "${tok.text}" at position ${tok.pos} (the first is "${this.year.source}" at position ${this.year.pos})`,
            tok.pos,
            `combine them into one filter, e.g. ${printYear(lo, hi) ?? 'year:2020..2024'}`,
            tok.text,
          );
        }
        this.year = { from, to, pos: clausePos, source: tok.text };
        this.clauses.push({ kind: 'year', from, to, pos: clausePos });
        return;
      }
      case 'term':
        this.add('require', cls.term, clausePos);
    }
  }

  private group(clausePos: number): void {
    const open = this.peek();
    this.i++;
    const terms: Term[] = [];
    const sources: string[] = [];
    let lastOr: Token | null = null;
    let expectAlt = true;
    for (;;) {
      const tok = this.peek();
      switch (tok.t) {
        case 'eof': {
          const body = this.input.slice(open.pos).trimEnd();
          throw new LabQueryError(
            'unclosed_group',
            `group opened at position ${open.pos} is never closed`,
            open.pos,
            `close the group: ${body})`,
            '(',
            { from: this.input.trimEnd().length, to: this.input.length, text: ')' },
          );
        }
        case 'rparen':
          if (terms.length === 0 && lastOr === null) {
            throw new LabQueryError(
              'empty_group',
              `empty group at position ${open.pos}`,
              open.pos,
              'put alternatives in the group, e.g. (iron OR cobalt), or remove it',
              this.input.slice(open.pos, tok.end),
              { from: open.pos, to: tok.end, text: '' },
            );
          }
          if (expectAlt && lastOr !== null) {
            throw new LabQueryError(
              'misplaced_or',
              `OR at position ${lastOr.pos} ends the group: it needs an alternative after it`,
              lastOr.pos,
              sources.length > 0
                ? `add an alternative or drop the OR: (${sources.join(' OR ')})`
                : 'e.g. (iron OR cobalt)',
              'OR',
              { from: lastOr.pos, to: lastOr.end, text: '' },
            );
          }
          this.i++;
          this.addGroup(terms, clausePos);
          return;
        case 'lparen':
          throw new LabQueryError(
            'nested_group',
            `group inside a group at position ${tok.pos}: groups cannot be nested`,
            tok.pos,
            'list every alternative in one group, e.g. (iron OR cobalt OR nickel)',
            '(',
          );
        case 'sign':
          throw new LabQueryError(
            'sign_in_group',
            `"${tok.sign}" at position ${tok.pos} is inside a group: alternatives take no sign`,
            tok.pos,
            tok.sign === '-'
              ? 'exclude the term outside the group, e.g. (iron OR cobalt) -oxide'
              : `drop the "+": alternatives are written bare, e.g. (iron OR cobalt)`,
            tok.sign,
            tok.sign === '+' ? { from: tok.pos, to: tok.end, text: '' } : undefined,
          );
        case 'phrase':
        case 'word': {
          this.i++;
          let term: Term;
          if (tok.t === 'phrase') {
            term = { kind: 'phrase', text: tok.text, pos: tok.pos };
          } else {
            const cls = classify(tok.text, tok.pos);
            if (cls.c === 'or') {
              if (expectAlt) {
                throw new LabQueryError(
                  'misplaced_or',
                  lastOr === null
                    ? `OR at position ${tok.pos} starts the group: it goes between two alternatives`
                    : `OR at position ${tok.pos} follows another OR: an alternative is missing`,
                  tok.pos,
                  'write one alternative on each side of OR, e.g. (iron OR cobalt)',
                  'OR',
                  { from: tok.pos, to: tok.end, text: '' },
                );
              }
              lastOr = tok;
              expectAlt = true;
              continue;
            }
            if (cls.c === 'reserved') {
              const prev = sources[sources.length - 1];
              const next = this.termSource(this.peek());
              throw new LabQueryError(
                cls.lower === 'or' ? 'lowercase_or' : 'operator_word',
                cls.lower === 'or'
                  ? `"${tok.text}" at position ${tok.pos}: write OR in capitals`
                  : `"${tok.text}" at position ${tok.pos}: a group takes only OR between its alternatives`,
                tok.pos,
                prev !== undefined && next !== null
                  ? `write (${prev} OR ${next})`
                  : 'write OR in capitals between alternatives, e.g. (iron OR cobalt)',
                tok.text,
                prev !== undefined && next !== null ? { from: tok.pos, to: tok.end, text: 'OR' } : undefined,
              );
            }
            if (cls.c === 'field') {
              parseYear(cls.name, cls.value, tok.pos, tok.text);
              throw new LabQueryError(
                'year_in_group',
                `year filter "${tok.text}" at position ${tok.pos} is inside a group`,
                tok.pos,
                `move it outside the group: (...) ${tok.text}`,
                tok.text,
              );
            }
            term = cls.term;
          }
          const src = this.source(tok);
          if (!expectAlt) {
            const prev = sources[sources.length - 1] ?? '';
            throw new LabQueryError(
              'missing_or',
              `"${src}" at position ${tok.pos} follows another alternative without OR`,
              tok.pos,
              `write OR between the alternatives: (${prev} OR ${src}); to search for both words as one name, quote them: "${prev.replaceAll('"', '')} ${src.replaceAll('"', '')}"`,
              src,
              { from: tok.pos, to: tok.pos, text: 'OR ' },
            );
          }
          terms.push(term);
          sources.push(src);
          expectAlt = false;
          break;
        }
      }
    }
  }

  /** A required or excluded term, once: the same term both required and excluded is a conflict. */
  private add(kind: 'require' | 'exclude', term: Term, pos: number): void {
    const key = printTerm(term);
    const [same, opposite] =
      kind === 'require' ? [this.required, this.excluded] : [this.excluded, this.required];
    const oppositeAt = opposite.get(key);
    if (oppositeAt !== undefined) throw conflict(key, pos, oppositeAt);
    if (same.has(key)) return;
    same.set(key, pos);
    this.clauses.push({ kind, term, pos });
  }

  private addGroup(terms: Term[], pos: number): void {
    const seen = new Set<string>();
    const alts: Term[] = [];
    for (const t of terms) {
      const key = printTerm(t);
      if (seen.has(key)) continue;
      seen.add(key);
      alts.push(t);
    }
    // Alternatives in canonical order: a reordered group is the same clause (and the same quote).
    alts.sort((a, b) => compareTerms(printTerm(a), printTerm(b)));
    if (alts.length === 1) {
      this.add('require', alts[0]!, pos);
      return;
    }
    const key = [...seen].sort(compareTerms).join(' OR ');
    if (this.groups.has(key)) return;
    this.groups.add(key);
    this.clauses.push({ kind: 'any', terms: alts, pos });
  }

  private finish(): LabQuery {
    if (!this.clauses.some((c) => c.kind === 'require' || c.kind === 'any')) {
      const what = this.clauses.some((c) => c.kind === 'exclude')
        ? this.year !== null
          ? 'only exclusions and a year filter'
          : 'only exclusions'
        : 'only a year filter';
      const example = printLabQuery({ clauses: this.clauses });
      throw new LabQueryError(
        'no_required_term',
        `the query has ${what}: at least one required term is needed`,
        0,
        `add a term to look for, written bare or with +, e.g. perovskite ${example}`,
      );
    }
    return { clauses: this.clauses };
  }
}

function conflict(key: string, pos: number, otherPos: number): LabQueryError {
  return new LabQueryError(
    'conflicting_term',
    `${key} at position ${pos} is both required and excluded (see position ${otherPos})`,
    pos,
    `keep either ${key} or -${key}`,
    key,
  );
}

function internal(pos: number): LabQueryError {
  return new LabQueryError(
    'internal_error',
    `could not read the query at position ${pos}`,
    pos,
    'rephrase it',
  );
}

/** Parses a lab filter; throws LabQueryError (and only that) for any unusable input. */
export function parseLabQuery(input: string): LabQuery {
  try {
    if (typeof input !== 'string' || input.trim() === '') {
      throw new LabQueryError(
        'query_empty',
        'the query is empty',
        0,
        'write at least one term, e.g. perovskite -lead year:2020..',
      );
    }
    let count = 0;
    for (let i = 0; i < input.length; i++) {
      const code = input.charCodeAt(i);
      // a surrogate pair counts as one character
      if (code >= 0xd800 && code <= 0xdbff) {
        const low = input.charCodeAt(i + 1);
        if (low >= 0xdc00 && low <= 0xdfff) i++;
      }
      count++;
      if (count === MAX_QUERY_LENGTH && i + 1 < input.length) {
        throw new LabQueryError(
          'query_too_long',
          `the query is longer than ${MAX_QUERY_LENGTH} characters (cut at position ${i + 1})`,
          i + 1,
          'shorten it: fewer terms, or a wildcard (word*) in place of a list of similar names',
        );
      }
    }
    return new Parser(input, tokenize(input)).parse();
  } catch (err) {
    if (err instanceof LabQueryError) throw err;
    throw internal(0);
  }
}
