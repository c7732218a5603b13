/** Calendar arithmetic on ISO dates as whole days since 1970-01-01 (UTC), for period indexes. */

export function dayNumber(isoDate: string): number {
  return Math.floor(Date.parse(`${isoDate}T00:00:00Z`) / 86_400_000);
}

export function isoDay(day: number): string {
  return new Date(day * 86_400_000).toISOString().slice(0, 10);
}

/** Months since year 0: a monotone month index. */
export function monthIndex(isoDate: string): number {
  return Number(isoDate.slice(0, 4)) * 12 + Number(isoDate.slice(5, 7)) - 1;
}

export function monthLabel(index: number): string {
  const year = Math.floor(index / 12);
  return `${String(year).padStart(4, '0')}-${String((index % 12) + 1).padStart(2, '0')}`;
}

/** The last day (day number) of a month index and of a year. */
export function monthEndDay(index: number): number {
  const year = Math.floor(index / 12);
  const month = index % 12;
  return Math.floor(Date.UTC(year, month + 1, 1) / 86_400_000) - 1;
}

export function yearEndDay(year: number): number {
  return Math.floor(Date.UTC(year + 1, 0, 1) / 86_400_000) - 1;
}

/** The day n calendar months before a day (clamped to the month's end), for trailing windows. */
export function monthsBefore(day: number, months: number): number {
  const d = new Date(day * 86_400_000);
  const target = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() - months, 1));
  const lastDay = new Date(Date.UTC(target.getUTCFullYear(), target.getUTCMonth() + 1, 0)).getUTCDate();
  target.setUTCDate(Math.min(d.getUTCDate(), lastDay));
  return Math.floor(target.getTime() / 86_400_000);
}
