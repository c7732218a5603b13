import { describe, expect, it } from 'vitest';
import type { HistoryPoint } from '../../../src/contracts/common.js';
import { ServiceError } from '../../../src/core/errors.js';
import { periodsBetween } from '../../../src/core/history.js';
import { historyRange, rangeText, selectPeriods } from '../../../src/core/history-range.js';

/** The problem a call throws (code, detail, extra), or null when it does not. */
function refusal(f: () => unknown): Record<string, unknown> | null {
  try {
    f();
    return null;
  } catch (e) {
    if (!(e instanceof ServiceError)) throw e;
    return { code: e.code, detail: e.detail, ...e.extra };
  }
}

const points = (labels: string[]): HistoryPoint[] =>
  labels.map((period, i) => ({ period, ri: i, ris: i / 2, hri: null, papers: i }));
const labels = (series: { period: string }[]) => series.map((p) => p.period);

describe('a history range: from, to, last', () => {
  it('takes a period in the form of its resolution, both ends, from no later than to', () => {
    expect(historyRange('yearly', { from: '2020', to: '2024' })).toEqual({ from: '2020', to: '2024' });
    expect(historyRange('monthly', { from: '2024-03', to: '2024-03' })).toEqual({
      from: '2024-03',
      to: '2024-03',
    });
    expect(historyRange('daily', { from: '2024-02-29', last: 10 })).toEqual({ from: '2024-02-29', last: 10 });
    expect(historyRange('daily', {})).toEqual({});
  });

  it('refuses a period of another resolution, naming the parameter and the form expected', () => {
    expect(refusal(() => historyRange('daily', { from: '2024-03' }))).toEqual({
      code: 'invalid_parameter',
      detail:
        "Parameter 'from': '2024-03' is not a period of a daily history, whose periods are days, YYYY-MM-DD (2024-03-15).",
      parameter: 'from',
      expected: 'YYYY-MM-DD',
    });
    expect(refusal(() => historyRange('yearly', { to: '2024-03-15' }))).toMatchObject({
      parameter: 'to',
      expected: 'YYYY',
      detail: expect.stringContaining('whose periods are years, YYYY (2024)'),
    });
    expect(refusal(() => historyRange('monthly', { from: '2024' }))).toMatchObject({
      parameter: 'from',
      expected: 'YYYY-MM',
    });
  });

  it('refuses a month or a day that the calendar does not have', () => {
    for (const [resolution, from] of [
      ['monthly', '2024-13'],
      ['monthly', '2024-00'],
      ['daily', '2024-02-30'],
      ['daily', '2023-02-29'],
      ['daily', '2024-04-31'],
      ['daily', '2024-13-01'],
    ] as const)
      expect([from, refusal(() => historyRange(resolution, { from }))?.parameter]).toEqual([from, 'from']);
    expect(refusal(() => historyRange('daily', { from: '2024-02-29', to: '2024-12-31' }))).toBeNull();
  });

  it('refuses from after to, and takes from equal to to', () => {
    expect(refusal(() => historyRange('yearly', { from: '2025', to: '2024' }))).toEqual({
      code: 'invalid_parameter',
      detail: "Parameter 'from': from (2025) is after to (2024): give from no later than to.",
      parameter: 'from',
      expected: 'YYYY',
    });
    expect(refusal(() => historyRange('monthly', { from: '2024-10', to: '2024-09' }))?.parameter).toBe(
      'from',
    );
    expect(refusal(() => historyRange('daily', { from: '2024-01-10', to: '2024-01-09' }))?.parameter).toBe(
      'from',
    );
    expect(refusal(() => historyRange('daily', { from: '2024-01-10', to: '2024-01-10' }))).toBeNull();
  });

  it('selects from..to, both included, then the last N of those', () => {
    const yearly = points(periodsBetween('2015', '2024', 'yearly'));
    expect(labels(selectPeriods(yearly, { from: '2020', to: '2022' }, 'yearly'))).toEqual([
      '2020',
      '2021',
      '2022',
    ]);
    expect(labels(selectPeriods(yearly, { last: 2 }, 'yearly'))).toEqual(['2023', '2024']);
    expect(labels(selectPeriods(yearly, { to: '2017', last: 2 }, 'yearly'))).toEqual(['2016', '2017']);
    expect(labels(selectPeriods(yearly, { from: '2023', last: 5 }, 'yearly'))).toEqual(['2023', '2024']);
    expect(labels(selectPeriods(yearly, { from: '1990', to: '2016' }, 'yearly'))).toEqual(['2015', '2016']);
    expect(selectPeriods(yearly, { from: '2030' }, 'yearly')).toEqual([]);
    expect(selectPeriods(yearly, {}, 'yearly')).toEqual(yearly);
    expect(selectPeriods(yearly, { last: 100 }, 'yearly')).toEqual(yearly);
    const daily = points(periodsBetween('2024-02-27', '2024-03-02', 'daily'));
    expect(labels(selectPeriods(daily, { from: '2024-02-29', to: '2024-03-01' }, 'daily'))).toEqual([
      '2024-02-29',
      '2024-03-01',
    ]);
    const monthly = points(periodsBetween('2023-11', '2024-02', 'monthly'));
    expect(labels(selectPeriods(monthly, { from: '2023-12', last: 1 }, 'monthly'))).toEqual(['2024-02']);
  });

  it('says a range as a reader reads it', () => {
    expect(rangeText({ from: '2020', to: '2022' })).toBe('from 2020 to 2022');
    expect(rangeText({ last: 1 })).toBe('the last 1 period');
    expect(rangeText({ to: '2020-03', last: 12 })).toBe('the last 12 periods to 2020-03');
    expect(rangeText({})).toBe('');
  });
});
