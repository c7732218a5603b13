import { decode, encode } from '@toon-format/toon';
import { describe, expect, it } from 'vitest';
import { answerText, tableReady } from '../../../src/core/answer-text.js';

/** A small seeded generator (mulberry32): the same random values on every run. */
function random(seed: number) {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// Strings that meet every quoting rule: delimiters, colons, brackets, edge blanks, literals,
// numbers, leading - and #, escapes, control characters, a BOM, non-ASCII.
const STRINGS = [
  'Fe',
  'oxygen evolution',
  '',
  ' lead',
  'trail ',
  'a:b',
  'a|b',
  'a,b',
  '[x]',
  '{y}',
  'true',
  'null',
  '42',
  '-3.5e2',
  '007',
  '-dash',
  '#hash',
  'quote "q"',
  'back\\slash',
  'line\nbreak',
  'tab\there',
  'bell\u0007',
  '\uFEFFbom',
  'Fe₃O₄ – α',
  'https://doi.org/10.1/x',
  'key.with.dots',
  '1st',
];
const KEYS = ['symbol', 'ri', 'title', 'a b', '1x', 'with-dash', 'k.k', 'x:y', '', 'elements'];

function value(rnd: () => number, depth: number): unknown {
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rnd() * xs.length)]!;
  const r = rnd();
  if (depth > 3 || r < 0.35) {
    const p = rnd();
    if (p < 0.45) return pick(STRINGS);
    if (p < 0.7)
      return pick([0, -0, 1, 2.5, -7, 1e21, 1e-7, 123456789, Number.NaN, Number.POSITIVE_INFINITY]);
    if (p < 0.85) return pick([true, false]);
    return null;
  }
  if (r < 0.55) return Array.from({ length: Math.floor(rnd() * 4) }, () => value(rnd, depth + 1));
  if (r < 0.8) {
    // A list of records, often of one shape (a table), sometimes with nested records.
    const shape = Array.from({ length: 1 + Math.floor(rnd() * 3) }, () => pick(KEYS));
    return Array.from({ length: Math.floor(rnd() * 4) }, () =>
      Object.fromEntries(shape.map((k) => [k, rnd() < 0.8 ? value(rnd, 9) : value(rnd, depth + 1)])),
    );
  }
  if (r < 0.9) {
    // A record of records of one shape (a keyed table), or of shapes that differ.
    const shape = Array.from({ length: 1 + Math.floor(rnd() * 3) }, () => pick(KEYS));
    const record = () => Object.fromEntries(shape.map((k) => [k, value(rnd, rnd() < 0.7 ? 9 : depth + 1)]));
    return Object.fromEntries(
      Array.from({ length: Math.floor(rnd() * 4) }, () => [
        pick(KEYS),
        rnd() < 0.8 ? record() : value(rnd, depth + 1),
      ]),
    );
  }
  // A list of records whose first field is a list (empty, of records, or mixed) or a record.
  if (r < 0.95)
    return Array.from({ length: 1 + Math.floor(rnd() * 3) }, () => ({
      [pick(KEYS)]: pick([
        [],
        [{ a: 1 }, { a: 2 }],
        [1, [2]],
        { x: { a: 1 }, y: { a: 2 } },
        { z: 1 },
        [[1, 2], []],
      ]),
      [pick(KEYS)]: value(rnd, depth + 1),
    }));
  return Object.fromEntries(
    Array.from({ length: Math.floor(rnd() * 4) }, () => [pick(KEYS), value(rnd, depth + 1)]),
  );
}

describe('answerText (TOON)', () => {
  it('joins a list of plain values inside a table row into one cell, unless one holds a comma', () => {
    const answer = {
      papers: [
        { doi: '10.1/a', elements: ['Fe', 'Ni'], topics: ['a, b', 'c'] },
        { doi: '10.1/b', elements: [], topics: [] },
      ],
      symbols: ['Fe', 'Ni'],
    };
    expect(tableReady(answer)).toEqual({
      papers: [
        { doi: '10.1/a', elements: 'Fe,Ni', topics: ['a, b', 'c'] },
        { doi: '10.1/b', elements: '', topics: '' },
      ],
      symbols: ['Fe', 'Ni'],
    });
    expect(answerText({ papers: [{ doi: '10.1/a', elements: ['Fe', 'Ni'], year: 2024 }] })).toBe(
      'papers[1|]{doi|elements|year}:\n  10.1/a|Fe,Ni|2024',
    );
  });

  it('writes the bytes the TOON library writes, for 3,000 random values', () => {
    const rnd = random(7);
    for (let i = 0; i < 3000; i++) {
      const v = i % 2 ? value(rnd, 0) : { answer: value(rnd, 0), rows: value(rnd, 1) };
      const expected = encode(tableReady(v) as never, { delimiter: '|' });
      expect([i, answerText(v)]).toEqual([i, expected]);
    }
  });

  it('reads back as the answer (every value kept)', () => {
    const answer = {
      symbol: 'Fe',
      ri: 12.5,
      history: [
        { period: '2024', ri: 1.5, ris: null },
        { period: '2025', ri: 2, ris: 40 },
      ],
      notes: { ri: 'RI: papers per 10,000 "papers"', read: 'research-intensity://notes/abc' },
    };
    expect(decode(answerText(answer))).toEqual(tableReady(answer));
  });
});
