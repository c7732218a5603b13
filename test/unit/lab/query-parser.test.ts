import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Clause, LabQuery, Term } from '../../../src/lab/query-ast.js';
import {
  applyFix,
  canonicalTermText,
  LabQueryError,
  parseLabQuery,
  printLabQuery,
  printTerm,
} from '../../../src/lab/query-parser.js';
import {
  allTerms,
  alternativeGroups,
  excludedTerms,
  normaliseLabQuery,
  requiredTerms,
  yearFilter,
} from '../../helpers/lab-query.js';

function parseError(input: string): LabQueryError {
  try {
    parseLabQuery(input);
  } catch (err) {
    if (err instanceof LabQueryError) return err;
    throw err;
  }
  throw new Error(`expected ${JSON.stringify(input)} to be refused`);
}

describe('grammar forms', () => {
  it('reads bare and + terms as required, - terms as excluded, keeping the text as written', () => {
    expect(parseLabQuery('Iron +MoS2 -Oxide')).toEqual({
      clauses: [
        { kind: 'require', term: { kind: 'word', text: 'Iron', pos: 0 }, pos: 0 },
        { kind: 'require', term: { kind: 'word', text: 'MoS2', pos: 6 }, pos: 5 },
        { kind: 'exclude', term: { kind: 'word', text: 'Oxide', pos: 12 }, pos: 11 },
      ],
    });
  });

  it('reads bare words as separate terms: iron oxide is two required terms', () => {
    expect(requiredTerms(parseLabQuery('iron oxide')).map(printTerm)).toEqual(['iron', 'oxide']);
  });

  it('reads a quoted name as one phrase, with or without a sign', () => {
    expect(parseLabQuery('"Perovskite  Stability" -"lead halide" +"x y"').clauses).toEqual([
      { kind: 'require', term: { kind: 'phrase', text: 'Perovskite  Stability', pos: 0 }, pos: 0 },
      { kind: 'exclude', term: { kind: 'phrase', text: 'lead halide', pos: 25 }, pos: 24 },
      { kind: 'require', term: { kind: 'phrase', text: 'x y', pos: 40 }, pos: 39 },
    ]);
  });

  it('reads an OR group of words, phrases and wildcards as one required clause', () => {
    expect(parseLabQuery('(MoS2 OR "nickel iron" OR perov*)').clauses).toEqual([
      {
        kind: 'any',
        pos: 0,
        terms: [
          { kind: 'word', text: 'MoS2', pos: 1 },
          { kind: 'phrase', text: 'nickel iron', pos: 9 },
          { kind: 'wildcard', prefix: 'perov', pos: 26 },
        ],
      },
    ]);
    expect(parseLabQuery('+( a OR b )').clauses[0]).toMatchObject({ kind: 'any', pos: 0 });
  });

  it('reads a group with one alternative (after duplicates are dropped) as a required term', () => {
    expect(parseLabQuery('(iron)').clauses).toEqual([
      { kind: 'require', term: { kind: 'word', text: 'iron', pos: 1 }, pos: 0 },
    ]);
    expect(normaliseLabQuery('(iron OR Iron) cobalt')).toBe('cobalt iron');
  });

  it('reads word* as a wildcard with at least 3 characters before the *', () => {
    expect(parseLabQuery('Perov* -cat*').clauses).toEqual([
      { kind: 'require', term: { kind: 'wildcard', prefix: 'Perov', pos: 0 }, pos: 0 },
      { kind: 'exclude', term: { kind: 'wildcard', prefix: 'cat', pos: 8 }, pos: 7 },
    ]);
  });

  it.each([
    ['x year:2020..2024', 2020, 2024],
    ['x year:2020..', 2020, null],
    ['x year:..2024', null, 2024],
    ['x year:2020', 2020, 2020],
    ['x YEAR:2020..2020', 2020, 2020],
  ])('reads %s as a year filter', (input, from, to) => {
    const q = parseLabQuery(input);
    expect(q.clauses[1]).toEqual({ kind: 'year', from, to, pos: 2 });
    expect(yearFilter(q)).toEqual({ from, to });
  });

  it('keeps - and + inside a word (x-ray, metal-organic, Li+) as part of it', () => {
    expect(requiredTerms(parseLabQuery('x-ray metal-organic Li+')).map((t) => t.kind)).toEqual([
      'word',
      'word',
      'word',
    ]);
    expect(normaliseLabQuery('X-ray Li+')).toBe('li+ x-ray');
  });

  it('accepts any whitespace between terms and ) right after a term', () => {
    expect(normaliseLabQuery('\tiron\n(a OR "b c")\u00a0-d ')).toBe('iron (a OR "b c") -d');
  });

  it('drops repeated terms and groups, keeping the first', () => {
    const q = parseLabQuery('iron Iron -oxide -OXIDE (a OR b) (a OR b) year:2020');
    expect(q.clauses.map((c) => c.kind)).toEqual(['require', 'exclude', 'any', 'year']);
    expect(q.clauses[0]).toMatchObject({ pos: 0 });
  });

  it('accepts exactly 1,000 characters, counting a surrogate pair as one', () => {
    expect(() => parseLabQuery('a'.repeat(1000))).not.toThrow();
    expect(() => parseLabQuery('😀'.repeat(1000))).not.toThrow();
  });
});

describe('canonical form', () => {
  it.each([
    [
      '  +Iron  -oxide (MoS2 OR "nickel iron") year:2020..2024 ',
      'iron (mos2 OR "nickel iron") -oxide year:2020..2024',
    ],
    ['year:2020.. -lead Perovskite', 'perovskite -lead year:2020..'],
    ['x year:2020..2020', 'x year:2020'],
    ['x Year:..2024', 'x year:..2024'],
    ['"  Nickel\t IRON " Perov*', '"nickel iron" perov*'],
    ['-b (c OR d) a', 'a (c OR d) -b'],
    ['(c OR d) a (e OR f) b', 'a b (c OR d) (e OR f)'],
    ['Fe In I CO Iron in', 'Fe I In co in iron'],
    ['"Fe" fe Fe', 'Fe "fe" fe'],
    ['Ni Fe', 'Fe Ni'],
    ['x -Pt -Au', 'x -Au -Pt'],
    ['(Pt OR Pd) x (Ni OR Co)', 'x (Co OR Ni) (Pd OR Pt)'],
    ['x year:0999', 'x year:0999'],
  ])('%j prints as %j', (input, canonical) => {
    expect(normaliseLabQuery(input)).toBe(canonical);
    expect(normaliseLabQuery(canonical)).toBe(canonical);
  });

  it('keeps a term as written in the AST and gives its canonical text separately', () => {
    const [iron, fe, phrase] = requiredTerms(parseLabQuery('IRON Fe "Nickel   Iron"'));
    expect(iron).toMatchObject({ text: 'IRON' });
    expect(canonicalTermText(iron!)).toBe('iron');
    expect(canonicalTermText(fe!)).toBe('Fe');
    expect(canonicalTermText(phrase!)).toBe('nickel iron');
  });
});

describe('helpers for the resolver', () => {
  it('splits a query into required terms, groups, exclusions and the year filter', () => {
    const q = parseLabQuery('iron (a OR bor*) -oxide "x y" year:2021..');
    expect(requiredTerms(q).map(printTerm)).toEqual(['iron', '"x y"']);
    expect(alternativeGroups(q).map((g) => g.map(printTerm))).toEqual([['a', 'bor*']]);
    expect(excludedTerms(q).map(printTerm)).toEqual(['oxide']);
    expect(yearFilter(q)).toEqual({ from: 2021, to: null });
    expect(allTerms(q).map(printTerm)).toEqual(['iron', 'a', 'bor*', 'oxide', '"x y"']);
    expect(yearFilter(parseLabQuery('iron'))).toBeNull();
  });
});

describe('unusable queries', () => {
  // input, code, position, a part of the message, a part of the suggestion
  const cases: [string, string, number, string, string][] = [
    ['', 'query_empty', 0, 'empty', 'e.g.'],
    ['   \n', 'query_empty', 0, 'empty', 'e.g.'],
    ['-iron', 'no_required_term', 0, 'only exclusions', 'perovskite -iron'],
    ['year:2020', 'no_required_term', 0, 'only a year filter', 'perovskite year:2020'],
    [
      '-iron year:2020..',
      'no_required_term',
      0,
      'only exclusions and a year filter',
      'perovskite -iron year:2020..',
    ],
    [
      'iron "perovskite stability',
      'unterminated_quote',
      5,
      'unterminated quote starting at position 5',
      'close the quote: "perovskite stability"',
    ],
    ['iron "', 'unterminated_quote', 5, 'position 5', 'remove the stray quote'],
    ['iron ""', 'empty_phrase', 5, 'empty quotes at position 5', 'between the quotes'],
    ['"perov*"', 'wildcard_in_phrase', 6, 'position 6', 'unquoted word'],
    [
      '(iron OR cobalt',
      'unclosed_group',
      0,
      'group opened at position 0',
      'close the group: (iron OR cobalt)',
    ],
    ['iron OR cobalt)', 'misplaced_or', 5, 'outside parentheses', '(iron OR cobalt)'],
    ['iron cobalt)', 'unmatched_parenthesis', 11, '")" at position 11 closes no group', 'remove it'],
    ['iron ()', 'empty_group', 5, 'empty group at position 5', 'remove it'],
    ['iron ( )', 'empty_group', 5, 'empty group', '(iron OR cobalt)'],
    ['(OR iron)', 'misplaced_or', 1, 'starts the group', 'one alternative on each side'],
    ['(iron OR)', 'misplaced_or', 6, 'ends the group', '(iron)'],
    ['(iron OR OR cobalt)', 'misplaced_or', 9, 'follows another OR', 'one alternative on each side'],
    ['(iron OR (cobalt OR nickel))', 'nested_group', 9, 'cannot be nested', 'one group'],
    ['(iron or cobalt)', 'lowercase_or', 6, 'write OR in capitals', '(iron OR cobalt)'],
    [
      '(iron cobalt)',
      'missing_or',
      6,
      'without OR',
      '(iron OR cobalt); to search for both words as one name, quote them: "iron cobalt"',
    ],
    ['(iron AND cobalt)', 'operator_word', 6, 'only OR', '(iron OR cobalt)'],
    ['iron or cobalt', 'misplaced_or', 5, '"or" at position 5 is outside parentheses', '(iron OR cobalt)'],
    ['iron AND cobalt', 'operator_word', 5, 'no AND', 'drop it: iron cobalt'],
    ['iron NOT cobalt', 'operator_word', 5, 'no NOT', 'write -cobalt'],
    ['iron -OR', 'operator_word', 5, 'operator word', 'quote it'],
    ['(iron OR -cobalt)', 'sign_in_group', 9, 'alternatives take no sign', 'outside the group'],
    ['(+iron OR cobalt)', 'sign_in_group', 1, 'alternatives take no sign', 'drop the "+"'],
    ['x -(iron OR cobalt)', 'excluded_group', 2, 'cannot be excluded', '-oxide -sulfide'],
    ['iron -', 'dangling_sign', 5, '"-" at position 5 has nothing after it', 'remove the "-"'],
    ['iron + oxide', 'dangling_sign', 5, 'nothing after it', '+oxide'],
    ['(iron OR cobalt -)', 'dangling_sign', 16, 'nothing after it', 'remove'],
    ['iron +-oxide', 'double_sign', 5, 'one sign only', '-oxide'],
    ['ir*', 'short_wildcard', 0, 'fewer than 3 characters', 'drop the * to search for "ir"'],
    ['iron *', 'short_wildcard', 5, 'fewer than 3', 'e.g. perovskit*'],
    ['perov*skite', 'misplaced_wildcard', 5, 'not at the end of the word', 'perov*'],
    ['p*x', 'misplaced_wildcard', 1, 'not at the end', 'at least 3 characters'],
    ['Fe(III)', 'missing_space', 2, 'missing space before "("', 'quote it: "Fe(III)"'],
    ['iron"oxide"', 'missing_space', 4, 'missing space', '"ironoxide"'],
    ['"iron"oxide', 'missing_space', 6, 'after the closing quote', 'space'],
    ['(a OR b)c', 'missing_space', 8, 'after ")"', '(a OR b) c'],
    ['iron author:smith', 'unknown_field', 5, 'unknown field "author:"', 'year:2020..2024'],
    ['iron author:smith', 'unknown_field', 5, 'the only field is year:', 'quote it: "author:smith"'],
    ['iron :x', 'unknown_field', 5, 'no field name', 'year:'],
    ['iron year:20', 'invalid_year', 5, 'needs 4-digit years', 'year:2020..2024'],
    ['iron year:', 'invalid_year', 5, 'has no year', 'year:2020'],
    ['iron year:2020-2024', 'invalid_year', 5, 'not a year or a year range', 'year:2020..2024'],
    ['iron year:..', 'invalid_year', 5, 'not a year', 'year:..2024'],
    ['iron year:2024..2020', 'reversed_year_range', 5, 'ends before it starts', 'year:2020..2024'],
    ['(iron OR year:2020)', 'year_in_group', 9, 'inside a group', 'outside the group'],
    ['iron -year:2020', 'signed_year', 5, 'takes no sign', 'year:2020..2024'],
    ['iron +year:2020', 'signed_year', 5, 'takes no sign', 'drop the "+": year:2020'],
    ['iron -year:20', 'invalid_year', 6, '4-digit', 'year:2020'],
    [
      'iron year:2020 year:2022..2023',
      'repeated_year',
      15,
      'second year filter',
      'combine them into one filter, e.g. year:2020..2023',
    ],
    [
      'iron year:2020.. year:2018',
      'repeated_year',
      17,
      'the first is "year:2020.." at position 5',
      'year:2018..',
    ],
    ['iron -iron', 'conflicting_term', 5, 'both required and excluded', 'keep either iron or -iron'],
    ['-Oxide oxide', 'conflicting_term', 7, 'both required and excluded (see position 0)', 'oxide'],
    [`${'a '.repeat(500)}b`, 'query_too_long', 1000, 'longer than 1000 characters', 'shorten'],
    ['😀'.repeat(1001), 'query_too_long', 2000, 'longer than 1000', 'shorten'],
  ];

  it.each(cases)('refuses %j as %s at %i', (input, code, position, message, suggestion) => {
    const err = parseError(input);
    expect(err).toBeInstanceOf(LabQueryError);
    expect(err).toBeInstanceOf(Error);
    expect(err.name).toBe('LabQueryError');
    expect(err.code).toBe(code);
    expect(err.position).toBe(position);
    expect(err.message).toContain(message);
    expect(err.suggestion).toContain(suggestion);
  });

  it('names the offending token', () => {
    expect(parseError('iron author:smith').token).toBe('author:smith');
    expect(parseError('(iron or cobalt)').token).toBe('or');
    expect(parseError('x year:2024..2020').token).toBe('year:2024..2020');
  });

  it('gives the corrected query where the suggestion is one definite edit, and it parses', () => {
    const fixes: [string, string][] = [
      ['iron "perovskite stability', 'iron "perovskite stability"'],
      ['iron "', 'iron'],
      ['iron ""', 'iron'],
      ['"perov*"', '"perov"'],
      ['(iron OR cobalt', '(iron OR cobalt)'],
      ['iron or cobalt', '(iron OR cobalt)'],
      ['iron cobalt)', 'iron cobalt'],
      ['iron ()', 'iron'],
      ['(iron OR)', '(iron)'],
      ['(OR iron)', '(iron)'],
      ['(iron OR OR cobalt)', '(iron OR cobalt)'],
      ['(iron or cobalt)', '(iron OR cobalt)'],
      ['(iron cobalt)', '(iron OR cobalt)'],
      ['(iron AND cobalt)', '(iron OR cobalt)'],
      ['iron AND cobalt', 'iron cobalt'],
      ['iron NOT cobalt', 'iron -cobalt'],
      ['(+iron OR cobalt)', '(iron OR cobalt)'],
      ['iron -', 'iron'],
      ['iron + oxide', 'iron oxide'],
      ['iron +-oxide', 'iron -oxide'],
      ['ir*', 'ir'],
      ['perov*skite', 'perov*'],
      ['Fe(III)', '"Fe(III)"'],
      ['"iron"oxide', '"iron" oxide'],
      ['(a OR b)c', '(a OR b) c'],
      ['iron author:smith', 'iron "author:smith"'],
      ['iron year:2024..2020', 'iron year:2020..2024'],
      ['iron +year:2020', 'iron year:2020'],
    ];
    for (const [input, fixed] of fixes) {
      const err = parseError(input);
      expect([input, err.fix && applyFix(input, err.fix)]).toEqual([input, fixed]);
      expect(() => parseLabQuery(fixed), fixed).not.toThrow();
    }
    // Where the suggestion is a choice or an example, no edit is offered.
    for (const input of ['x -(iron OR cobalt)', 'iron year:20', '(iron OR year:2020)', 'iron -iron', '-iron'])
      expect([input, parseError(input).fix]).toEqual([input, undefined]);
  });

  it('refuses a non-string with LabQueryError too (a front door may pass undefined)', () => {
    expect(parseError(undefined as unknown as string).code).toBe('query_empty');
  });
});

// ---------------------------------------------------------------------------------------------
// Properties

const PROPERTY_RUNS = { numRuns: 1000 };

function checkRefusal(input: string, err: unknown): void {
  expect(err).toBeInstanceOf(LabQueryError);
  const e = err as LabQueryError;
  expect(e.code).not.toBe('internal_error');
  expect(e.position).toBeGreaterThanOrEqual(0);
  expect(e.position).toBeLessThanOrEqual(input.length);
  expect(e.message.length).toBeGreaterThan(0);
  expect(e.suggestion.length).toBeGreaterThan(0);
}

/** Parses, or checks the refusal is a proper LabQueryError and returns null. */
function tryParse(input: string): LabQuery | null {
  try {
    return parseLabQuery(input);
  } catch (err) {
    checkRefusal(input, err);
    return null;
  }
}

const grammarPiece = fc.constantFrom(
  '+',
  '-',
  '(',
  ')',
  '"',
  '*',
  ':',
  ' ',
  ' ',
  '  ',
  '\t',
  'OR',
  'or',
  'AND',
  'NOT',
  'year',
  'year:',
  'Year:',
  '..',
  '2020',
  '2024',
  '19',
  '0',
  'iron',
  'Fe',
  'In',
  'mos2',
  'perov',
  'a',
  'x-ray',
  'é',
  '😀',
  '\u00a0',
);
const grammarString = fc.oneof(
  fc.array(grammarPiece, { maxLength: 20 }).map((xs) => xs.join('')),
  fc.array(grammarPiece, { maxLength: 20 }).map((xs) => xs.join(' ')),
);

describe('property: any string either parses or is refused with a LabQueryError', () => {
  it.each([
    ['fc.string', fc.string({ maxLength: 60 })],
    ['full unicode', fc.string({ unit: 'binary', maxLength: 60 })],
    ['grapheme', fc.string({ unit: 'grapheme', maxLength: 30 })],
    ['grammar pieces', grammarString],
    [
      'long strings',
      fc.string({ minLength: 990, maxLength: 1010, unit: fc.constantFrom('a', ' ', '😀', '(') }),
    ],
  ])('%s', (_name, arb) => {
    fc.assert(
      fc.property(arb, (s) => {
        tryParse(s);
      }),
      PROPERTY_RUNS,
    );
  });
});

// Arbitraries of valid queries, built as ASTs.
const SPECIAL = /[\s()"*:]/;
const wordText = fc
  .oneof(
    fc.string({ minLength: 1, maxLength: 8, unit: fc.constantFrom(...'abcxyzABCFeIn0129-+.éßİK₂') }),
    fc.string({ minLength: 1, maxLength: 6, unit: 'binary' }),
    fc.constantFrom('Fe', 'In', 'I', 'CO', 'Co', 'iron', 'MoS2', 'x-ray'),
  )
  .filter(
    (s) =>
      !SPECIAL.test(s) &&
      !s.startsWith('+') &&
      !s.startsWith('-') &&
      !['or', 'and', 'not'].includes(s.toLowerCase()),
  );
const term: fc.Arbitrary<Term> = fc.oneof(
  wordText.map((text): Term => ({ kind: 'word', text, pos: 0 })),
  fc
    .string({
      minLength: 1,
      maxLength: 20,
      unit: fc.oneof(
        fc.constantFrom(' ', '\t', 'a', 'B', '-', 'é', ':'),
        fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
      ),
    })
    .filter((s) => !s.includes('"') && !s.includes('*') && s.trim() !== '')
    .map((text): Term => ({ kind: 'phrase', text, pos: 0 })),
  wordText.filter((s) => [...s].length >= 3).map((prefix): Term => ({ kind: 'wildcard', prefix, pos: 0 })),
);
const year = fc.integer({ min: 1000, max: 9999 });
const yearClause: fc.Arbitrary<Clause> = fc
  .tuple(fc.option(year), fc.option(year))
  .filter(([a, b]) => a !== null || b !== null)
  .map(([a, b]): Clause => {
    const from = a !== null && b !== null ? Math.min(a, b) : a;
    const to = a !== null && b !== null ? Math.max(a, b) : b;
    return { kind: 'year', from, to, pos: 0 };
  });
const positive: fc.Arbitrary<Clause> = fc.oneof(
  term.map((t): Clause => ({ kind: 'require', term: t, pos: 0 })),
  fc.array(term, { minLength: 2, maxLength: 4 }).map((terms): Clause => ({ kind: 'any', terms, pos: 0 })),
);
const negative: fc.Arbitrary<Clause> = term.map((t): Clause => ({ kind: 'exclude', term: t, pos: 0 }));

const validQuery: fc.Arbitrary<LabQuery> = fc
  .tuple(
    fc.array(positive, { minLength: 1, maxLength: 5 }),
    fc.array(negative, { maxLength: 3 }),
    fc.option(yearClause),
  )
  .chain(([pos, neg, y]) =>
    fc.shuffledSubarray([...pos, ...neg, ...(y ? [y] : [])], {
      minLength: pos.length + neg.length + (y ? 1 : 0),
    }),
  )
  .map((clauses) => ({ clauses }))
  .filter((q) => {
    const required = new Set(requiredTerms(q).map(printTerm));
    for (const c of q.clauses) {
      if (c.kind === 'any' && new Set(c.terms.map(printTerm)).size === 1)
        required.add(printTerm(c.terms[0]!));
    }
    return excludedTerms(q).every((t) => !required.has(printTerm(t)));
  });

/** The meaning of a query without positions or order: per kind, the canonical terms, sorted. */
function meaning(q: LabQuery) {
  const sorted = (xs: string[]) => [...xs].sort();
  return {
    required: sorted(requiredTerms(q).map(printTerm)),
    groups: sorted(alternativeGroups(q).map((g) => g.map(printTerm).join(' OR '))),
    excluded: sorted(excludedTerms(q).map(printTerm)),
    year: yearFilter(q),
  };
}

/** Writes a query the way a person might: odd spacing, optional +, single years as ranges. */
function messyRender(q: LabQuery, spaces: string[], plus: boolean[]): string {
  let k = 0;
  const gap = () => spaces[k++ % spaces.length] ?? ' ';
  const sep = () => gap() || ' ';
  const raw = (t: Term): string =>
    t.kind === 'word' ? t.text : t.kind === 'phrase' ? `"${t.text}"` : `${t.prefix}*`;
  const y = (n: number) => String(n).padStart(4, '0');
  const render = (c: Clause, i: number): string => {
    switch (c.kind) {
      case 'require':
        return `${plus[i % plus.length] ? '+' : ''}${raw(c.term)}`;
      case 'exclude':
        return `-${raw(c.term)}`;
      case 'any':
        return `(${gap()}${c.terms.map(raw).join(`${sep()}OR${sep()}`)}${gap()})`;
      case 'year':
        return `year:${c.from === null ? '' : y(c.from)}..${c.to === null ? '' : y(c.to)}`;
    }
  };
  return q.clauses
    .map(render)
    .map((s) => `${gap()}${s}`)
    .join(' ');
}

describe('property: printing is canonical', () => {
  it('(b) print(parse(print(q))) === print(q) for generated valid queries', () => {
    fc.assert(
      fc.property(validQuery, (q) => {
        const printed = printLabQuery(q);
        expect(printLabQuery(parseLabQuery(printed))).toBe(printed);
      }),
      PROPERTY_RUNS,
    );
  });

  it('(d) the order clauses are written in changes nothing: print(q) === print(q reordered)', () => {
    fc.assert(
      fc.property(validQuery, fc.integer({ min: 0, max: 1000 }), (q, seed) => {
        // A rotation and a reversal: every clause moves unless the query has one.
        const k = seed % Math.max(1, q.clauses.length);
        const reordered = [...q.clauses.slice(k), ...q.clauses.slice(0, k)].reverse();
        expect(printLabQuery({ clauses: reordered })).toBe(printLabQuery(q));
      }),
      PROPERTY_RUNS,
    );
  });

  it('(c) parse(print(parse(s))) means the same as parse(s) for any s that parses', () => {
    const messy = fc
      .tuple(
        validQuery,
        fc.array(fc.constantFrom(' ', '  ', '\t', '\n', '\u00a0', ''), { minLength: 1, maxLength: 5 }),
        fc.array(fc.boolean(), { minLength: 1, maxLength: 5 }),
      )
      .map(([q, spaces, plus]) => messyRender(q, spaces, plus));
    let parsed = 0;
    fc.assert(
      fc.property(fc.oneof(grammarString, messy, fc.string({ maxLength: 30 })), (s) => {
        const q = tryParse(s);
        if (q === null) return;
        parsed++;
        const again = parseLabQuery(printLabQuery(q));
        expect(meaning(again)).toEqual(meaning(q));
        expect(printLabQuery(again)).toBe(printLabQuery(q));
      }),
      { numRuns: 2000 },
    );
    expect(parsed).toBeGreaterThan(200);
  });

  it('a messily written valid query normalises to the canonical print of its AST', () => {
    fc.assert(
      fc.property(
        validQuery,
        fc.array(fc.constantFrom(' ', '   ', '\t', '\n'), { minLength: 1, maxLength: 4 }),
        fc.array(fc.boolean(), { minLength: 1, maxLength: 4 }),
        (q, spaces, plus) => {
          expect(normaliseLabQuery(messyRender(q, spaces, plus))).toBe(printLabQuery(q));
        },
      ),
      PROPERTY_RUNS,
    );
  });
});
