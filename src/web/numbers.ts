/**
 * How the pages write numbers, the same everywhere: RI and HRI (papers per 10,000) with two
 * decimals and thousands separators, or two significant digits below 0.1 (so a small share never
 * reads 0.00); RIS (0-100) with one decimal; counts with thousands separators, and a counted noun
 * in the singular for one ("1 citation").
 */
export function riText(value: number): string {
  if (value === 0) return '0';
  if (Math.abs(value) >= 0.1)
    return value.toLocaleString('en', { minimumFractionDigits: 2, maximumFractionDigits: 2 });
  return value.toFixed(Math.min(20, 1 - Math.floor(Math.log10(Math.abs(value)))));
}

export const risText = (value: number): string => value.toFixed(1);

export const countText = (value: number): string => value.toLocaleString('en');

/** A count and its noun ("1 citation", "1,330 papers"); `plural` where adding "s" is wrong. */
export function countOf(value: number, noun: string, plural = `${noun}s`): string {
  return `${countText(value)} ${value === 1 ? noun : plural}`;
}
