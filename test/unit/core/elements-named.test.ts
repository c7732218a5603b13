import { describe, expect, it } from 'vitest';
import { symbolsNamedIn } from '../../../src/core/elements.js';

describe('the elements a search names', () => {
  it('finds an element by its name, a spelling variant or its symbol as written', () => {
    expect(symbolsNamedIn('iron')).toEqual(['Fe']);
    expect(symbolsNamedIn('Iron')).toEqual(['Fe']);
    expect(symbolsNamedIn('Fe')).toEqual(['Fe']);
    expect(symbolsNamedIn('aluminum alloys')).toEqual(['Al']);
    expect(symbolsNamedIn('sulphur and caesium')).toEqual(['S', 'Cs']);
    expect(symbolsNamedIn('nickel iron catalysts')).toEqual(['Ni', 'Fe']);
    expect(symbolsNamedIn('Ni-Fe layered hydroxide')).toEqual(['Ni', 'Fe']);
    expect(symbolsNamedIn('iron Fe iron')).toEqual(['Fe']);
  });

  it('reads a lower-case symbol only as the whole query, and a word-like symbol only alone', () => {
    expect(symbolsNamedIn('fe')).toEqual(['Fe']);
    expect(symbolsNamedIn('co oxidation')).toEqual([]);
    expect(symbolsNamedIn('Co oxidation')).toEqual(['Co']);
    expect(symbolsNamedIn('In situ spectroscopy')).toEqual([]);
    expect(symbolsNamedIn('As grown films')).toEqual([]);
    expect(symbolsNamedIn('In')).toEqual(['In']);
    expect(symbolsNamedIn('in')).toEqual([]);
    expect(symbolsNamedIn('steelmaking')).toEqual([]);
    expect(symbolsNamedIn('environmental remediation')).toEqual([]);
  });
});
