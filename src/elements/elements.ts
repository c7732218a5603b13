import { elements as packageElements } from 'chemical-elements';

/** One of the 118 chemical elements, as the service names it. */
export interface Element {
  symbol: string;
  name: string;
  number: number;
  group: number | null;
  period: number;
  /** Other spellings that name the same element (British/American, historical). */
  variants: string[];
}

/** The project's own spelling variants; the package gives one name per element. */
const SPELLING_VARIANTS: Record<string, string[]> = {
  Al: ['aluminum', 'aluminium'],
  S: ['sulfur', 'sulphur'],
  Cs: ['cesium', 'caesium'],
};

/** Period from atomic number (the row of the periodic table). */
export function periodOf(z: number): number {
  const ends = [2, 10, 18, 36, 54, 86, 118];
  return ends.findIndex((end) => z <= end) + 1;
}

/** IUPAC group 1-18; null for lanthanides and actinides other than the group-3 heads (La, Ac). */
export function groupOf(z: number): number | null {
  const period = periodOf(z);
  if (period === 1) return z === 1 ? 1 : 18;
  if (period <= 3) {
    const offset = z - (period === 2 ? 2 : 10);
    return offset <= 2 ? offset : offset + 10;
  }
  const start = [0, 0, 0, 0, 18, 36, 54, 86][period]!;
  const offset = z - start;
  if (period <= 5) return offset;
  // periods 6 and 7 carry the 14 f-block elements after the group-3 head.
  if (offset <= 3) return offset;
  if (offset <= 17) return null;
  return offset - 14;
}

export const ELEMENTS: readonly Element[] = packageElements.map((e) => {
  const name = e.name; // IUPAC names: Aluminium, Caesium, Sulfur
  return {
    symbol: e.symbol,
    name,
    number: e.number,
    group: groupOf(e.number),
    period: periodOf(e.number),
    variants: SPELLING_VARIANTS[e.symbol] ?? [name.toLowerCase()],
  };
});

const BY_LOWER_SYMBOL = new Map(ELEMENTS.map((e) => [e.symbol.toLowerCase(), e]));

/** Case-insensitive symbol lookup (fe, FE, Fe all find iron). */
export function findElement(symbol: string): Element | undefined {
  return BY_LOWER_SYMBOL.get(symbol.toLowerCase());
}
