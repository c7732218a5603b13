import { describe, expect, it } from 'vitest';
import { ELEMENTS, findElement, groupOf, periodOf } from '../../../src/elements/elements.js';

describe('ELEMENTS', () => {
  it('has the 118 elements with unique symbols and atomic numbers 1..118 in order', () => {
    expect(ELEMENTS).toHaveLength(118);
    expect(new Set(ELEMENTS.map((e) => e.symbol)).size).toBe(118);
    expect(ELEMENTS.map((e) => e.number)).toEqual(Array.from({ length: 118 }, (_, i) => i + 1));
    expect(ELEMENTS[25]?.symbol).toBe('Fe');
  });

  it('carries the spelling variants', () => {
    expect(findElement('al')?.variants).toEqual(expect.arrayContaining(['aluminium', 'aluminum']));
    expect(findElement('S')?.variants).toEqual(expect.arrayContaining(['sulfur', 'sulphur']));
    expect(findElement('CS')?.variants).toEqual(expect.arrayContaining(['caesium', 'cesium']));
    expect(findElement('Fe')?.variants).toEqual(['iron']);
  });

  it.each([
    ['H', 1, 1],
    ['He', 18, 1],
    ['Fe', 8, 4],
    ['La', 3, 6],
    ['Ce', null, 6],
    ['Lu', null, 6],
    ['Hf', 4, 6],
    ['Ac', 3, 7],
    ['Th', null, 7],
    ['Rf', 4, 7],
    ['Og', 18, 7],
    ['Na', 1, 3],
    ['Al', 13, 3],
    ['Zn', 12, 4],
    ['Xe', 18, 5],
  ] as const)('%s is in group %s, period %s', (symbol, group, period) => {
    const e = findElement(symbol);
    expect(e).toBeDefined();
    expect(e?.group).toBe(group);
    expect(e?.period).toBe(period);
  });

  it('groupOf and periodOf agree with the table', () => {
    expect(periodOf(1)).toBe(1);
    expect(periodOf(2)).toBe(1);
    expect(periodOf(3)).toBe(2);
    expect(periodOf(118)).toBe(7);
    expect(groupOf(26)).toBe(8);
    expect(groupOf(57)).toBe(3);
    expect(groupOf(71)).toBeNull();
    expect(groupOf(72)).toBe(4);
    expect(groupOf(118)).toBe(18);
    for (const e of ELEMENTS) {
      expect(e.period).toBe(periodOf(e.number));
      expect(e.group).toBe(groupOf(e.number));
    }
  });
});
