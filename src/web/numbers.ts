/**
 * How the pages write numbers, the same everywhere: RI and HRI (papers per 10,000) with two
 * decimals, or two significant digits below 0.1 (so a small share never reads 0.00); RIS (0-100)
 * with one decimal; counts with thousands separators.
 */
export function riText(value: number): string {
  if (value === 0) return '0';
  if (Math.abs(value) >= 0.1) return value.toFixed(2);
  return value.toFixed(Math.min(20, 1 - Math.floor(Math.log10(Math.abs(value)))));
}

export const risText = (value: number): string => value.toFixed(1);

export const countText = (value: number): string => value.toLocaleString('en');
