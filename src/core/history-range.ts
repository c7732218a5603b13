/**
 * Which periods of a history an answer holds, as REST's query and MCP's arguments give them: from
 * and to (both included, in the resolution's own period form: 2024, 2024-03, 2024-03-15) and last
 * (the N most recent of those). Pure functions: the checks, which refuse naming the parameter and
 * the form it takes, and the selection. A range narrows an answer; it never changes its price.
 */
import type { Resolution } from '../scoring/resolutions.js';
import { ServiceError } from './errors.js';

export interface HistoryRange {
  from?: string | undefined;
  to?: string | undefined;
  last?: number | undefined;
}

/** Each resolution's periods: their form, and how a refusal names it. */
const PERIODS: Record<Resolution, { form: RegExp; are: string; expected: string }> = {
  yearly: { form: /^\d{4}$/, are: 'years, YYYY (2024)', expected: 'YYYY' },
  monthly: { form: /^\d{4}-(?:0[1-9]|1[0-2])$/, are: 'months, YYYY-MM (2024-03)', expected: 'YYYY-MM' },
  daily: { form: /^\d{4}-\d{2}-\d{2}$/, are: 'days, YYYY-MM-DD (2024-03-15)', expected: 'YYYY-MM-DD' },
};

/**
 * The range as asked, checked against the resolution: from and to are periods of that resolution
 * (a real month, a real day), from no later than to. `last` is checked where it is parsed (an
 * integer from 1, contracts/params.ts).
 */
export function historyRange(resolution: Resolution, range: HistoryRange): HistoryRange {
  const { form, are, expected } = PERIODS[resolution];
  for (const name of ['from', 'to'] as const) {
    const value = range[name];
    if (value === undefined) continue;
    if (!form.test(value) || (resolution === 'daily' && !isDay(value)))
      throw refusal(
        name,
        `'${value}' is not a period of a ${resolution} history, whose periods are ${are}.`,
        expected,
      );
  }
  const { from, to } = range;
  if (from !== undefined && to !== undefined && periodIndex(from, resolution) > periodIndex(to, resolution))
    throw refusal('from', `from (${from}) is after to (${to}): give from no later than to.`, expected);
  return range;
}

/** Whether a YYYY-MM-DD text is a day of the calendar (not 2024-02-30). */
function isDay(text: string): boolean {
  const t = Date.parse(`${text}T00:00:00Z`);
  return !Number.isNaN(t) && new Date(t).toISOString().slice(0, 10) === text;
}

function refusal(parameter: 'from' | 'to', why: string, expected: string): ServiceError {
  return new ServiceError('invalid_parameter', `Parameter '${parameter}': ${why}`, { parameter, expected });
}

/** A period label as a number that orders periods (years are not zero-padded, so not their text). */
export function periodIndex(label: string, resolution: Resolution): number {
  if (resolution === 'yearly') return Number(label);
  if (resolution === 'monthly') return Number(label.slice(0, -3)) * 12 + Number(label.slice(-2));
  return Date.parse(`${label}T00:00:00Z`);
}

/** The periods of a series (oldest first) that a checked range selects: from..to, then the last N. */
export function selectPeriods<T extends { period: string }>(
  series: readonly T[],
  range: HistoryRange,
  resolution: Resolution,
): T[] {
  const from = range.from === undefined ? -Infinity : periodIndex(range.from, resolution);
  const to = range.to === undefined ? Infinity : periodIndex(range.to, resolution);
  const within =
    from === -Infinity && to === Infinity
      ? [...series]
      : series.filter((p) => {
          const i = periodIndex(p.period, resolution);
          return i >= from && i <= to;
        });
  return range.last === undefined ? within : within.slice(Math.max(0, within.length - range.last));
}

/** A range as a reader is told it ("from 2020 to 2022", "the last 12 periods"), or '' when none was asked. */
export function rangeText(range: HistoryRange): string {
  const bounds = [
    ...(range.from === undefined ? [] : [`from ${range.from}`]),
    ...(range.to === undefined ? [] : [`to ${range.to}`]),
  ].join(' ');
  if (range.last === undefined) return bounds;
  const last = `the last ${range.last} period${range.last === 1 ? '' : 's'}`;
  return bounds ? `${last} ${bounds}` : last;
}
