import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { describe, expect, it } from 'vitest';
import type { HistoryPoint } from '../../../src/contracts/common.js';
import type { ElementHistoriesAnswer, ElementHistoryAnswer } from '../../../src/contracts/elements.js';
import { estimateTokens } from '../../../src/core/answer-size.js';
import { answerText } from '../../../src/core/answer-text.js';
import { ServiceError } from '../../../src/core/errors.js';
import { fitHistory, periodsBetween } from '../../../src/core/history.js';
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

describe('the size of an answer in tokens', () => {
  it('is estimated from the pieces a tokenizer cuts text into', () => {
    expect(estimateTokens('')).toBe(0);
    // A history row: a space and a space, 202 4 - 03 - 15, | 0, | 12 . 5, |null (a word: 2), | 3.
    expect(estimateTokens('  2024-03-15|0|12.5|null|3')).toBe(18);
    expect(estimateTokens('1234567')).toBe(3);
    expect(estimateTokens('intensity')).toBe(3);
    // Never more than the text's length.
    for (const text of ['a', '||', '  ', 'x-y', '2024'])
      expect(estimateTokens(text)).toBeLessThanOrEqual(text.length);
  });

  it('is at least what o200k counts for a history, and near it', () => {
    // A history with the values the snapshots hold: RI and HRI to 4 decimals, RIS to 4, a count.
    const answer = historyAnswer(points(periodsBetween('2020-01-01', '2021-12-31', 'daily')));
    for (const [i, p] of answer.series.entries()) {
      p.ri = i % 7 === 0 ? 0 : Math.round(((i * 7919) % 100_000) / 7) / 10_000;
      p.ris = Math.round(((i * 104_729) % 1_000_000) / 10) / 10_000;
      p.hri = i % 3 === 0 ? null : Math.round(((i * 31) % 50_000) / 3) / 10_000;
    }
    const text = answerText(answer);
    const real = countTokens(text);
    expect(estimateTokens(text)).toBeGreaterThanOrEqual(real);
    expect(estimateTokens(text)).toBeLessThan(real * 1.1);
  });
});

function historyAnswer(series: HistoryPoint[]): ElementHistoryAnswer {
  return {
    symbol: 'Fe',
    resolution: 'daily',
    series,
    canonical_url: 'https://ri.example/elements/Fe',
    notes: {
      read: 'research-intensity://notes/0123456789abcdef',
    } as unknown as ElementHistoryAnswer['notes'],
    data_version: '0123456789abcdef',
  };
}

describe('a history result held to its size', () => {
  const again = (args: Record<string, unknown>) => ({ args, url: 'https://ri.example/v1/whole' });
  const tokens = (a: object) => estimateTokens(answerText(a));

  it('is unchanged when it fits', () => {
    const answer = historyAnswer(points(periodsBetween('2024-01-01', '2024-03-01', 'daily')));
    expect(fitHistory(answer, again({ symbol: 'Fe', resolution: 'daily' }), 9_000)).toBe(answer);
  });

  it('keeps the most recent periods that fit, as many as fit, and says what it left out and how to get it', () => {
    const series = points(periodsBetween('2020-01-01', '2024-12-31', 'daily'));
    const answer = historyAnswer(series);
    const budget = 3_000;
    const fitted = fitHistory(
      answer,
      again({ symbol: 'Fe', resolution: 'daily', from: '2020-01-01' }),
      budget,
    );
    const kept = fitted.series.length;
    expect(kept).toBeGreaterThan(50);
    expect(tokens(fitted)).toBeLessThanOrEqual(budget);
    // The most recent ones, unchanged; one more would not fit.
    expect(fitted.series).toEqual(series.slice(-kept));
    // One period more (with the same note) would not fit.
    expect(tokens({ ...fitted, series: series.slice(-(kept + 1)) })).toBeGreaterThan(budget);
    const leftOut = series.length - kept;
    const to = series[leftOut - 1]!.period;
    const note = (fitted.notes as { left_out: string }).left_out;
    expect(note).toContain(
      `The ${leftOut.toLocaleString('en-US')} oldest periods (2020-01-01 to ${to}) are left out`,
    );
    expect(note).toContain(
      `call again with {"symbol":"Fe","resolution":"daily","from":"2020-01-01","to":"${to}","data_version":"0123456789abcdef"}`,
    );
    expect(note).toContain('The whole answer: https://ri.example/v1/whole');
    // The rest asked with last: what remains of the N.
    const lastN = fitHistory(historyAnswer(series.slice(-1000)), again({ symbol: 'Fe', last: 1000 }), budget);
    const rest = JSON.parse(
      /call again with (\{.*?\})\./.exec((lastN.notes as { left_out: string }).left_out)![1]!,
    );
    expect(rest.last).toBe(1000 - lastN.series.length);
    expect(rest.to).toBe(series.at(-lastN.series.length - 1)!.period);
  });

  it('cuts every history of a batch to the same most recent periods', () => {
    const long = points(periodsBetween('2019-01-01', '2024-12-31', 'daily'));
    const short = long.slice(-40);
    const batch: ElementHistoriesAnswer = {
      resolution: 'daily',
      count: 3,
      histories: [
        { symbol: 'Fe', series: long },
        { symbol: 'Tc', series: short },
        { symbol: 'Og', series: [] },
      ],
      canonical_url: 'https://ri.example/elements',
      notes: { read: 'x' } as unknown as ElementHistoriesAnswer['notes'],
      data_version: '0123456789abcdef',
    };
    const fitted = fitHistory(batch, again({ symbols: 'Fe,Tc,Og', resolution: 'daily' }), 2_500);
    const [fe, tc, og] = fitted.histories;
    expect(fe!.series).toEqual(long.slice(-fe!.series.length));
    expect(fe!.series.length).toBeGreaterThan(40);
    expect(tc!.series).toEqual(short);
    expect(og!.series).toEqual([]);
    expect(tokens(fitted)).toBeLessThanOrEqual(2_500);
    const to = long.at(-fe!.series.length - 1)!.period;
    expect((fitted.notes as { left_out: string }).left_out).toContain(
      `The periods up to ${to} are left out (Fe ${(long.length - fe!.series.length).toLocaleString('en-US')})`,
    );
  });
});
