/** Calendar arithmetic on whole days since 1970-01-01 (UTC), for period indexes. */

export function dayNumber(isoDate: string): number {
  return Math.floor(Date.parse(`${isoDate}T00:00:00Z`) / 86_400_000);
}

/** Year, month (1-12) and day of a day number, by arithmetic (no Date object: it runs per paper). */
export function civilFromDays(day: number): { year: number; month: number; dayOfMonth: number } {
  // Howard Hinnant's days_from_civil inverse, valid for the proleptic Gregorian calendar.
  const z = day + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor(
    (doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365,
  );
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const dayOfMonth = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  return { year: yoe + era * 400 + (month <= 2 ? 1 : 0), month, dayOfMonth };
}

export function isoDay(day: number): string {
  const { year, month, dayOfMonth } = civilFromDays(day);
  return `${String(year).padStart(4, '0')}-${String(month).padStart(2, '0')}-${String(dayOfMonth).padStart(2, '0')}`;
}

/** Months since year 0 of a day number: a monotone month index. */
export function monthIndexOfDay(day: number): number {
  const { year, month } = civilFromDays(day);
  return year * 12 + month - 1;
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
