import { describe, expect, it } from 'vitest';
import { historyChart, lineChart, openYearTo } from '../../../src/web/chart.js';
import { countOf, countText, risText, riText } from '../../../src/web/numbers.js';

describe('numbers on the pages', () => {
  it('writes RI and HRI with two decimals, small ones with two significant digits, RIS with one', () => {
    expect([riText(225.4249), riText(1), riText(0.5), riText(0.1)]).toEqual([
      '225.42',
      '1.00',
      '0.50',
      '0.10',
    ]);
    // A small share never reads 0.00 (the issue saw HRI as "0.0000").
    expect([riText(0.0345), riText(0.0012), riText(0.00000071)]).toEqual(['0.035', '0.0012', '0.00000071']);
    expect(riText(0)).toBe('0');
    expect([risText(74), risText(8.2249), risText(100)]).toEqual(['74.0', '8.2', '100.0']);
    expect(countText(1483)).toBe('1,483');
  });

  it('writes every number one way: thousands separated, one counted thing in the singular', () => {
    // An RI of a thousand or more beside a count of a thousand or more: both separated.
    expect([riText(2392.649), riText(-1234.5), countText(1330)]).toEqual(['2,392.65', '-1,234.50', '1,330']);
    expect([countOf(1, 'citation'), countOf(0, 'citation'), countOf(1330, 'paper')]).toEqual([
      '1 citation',
      '0 citations',
      '1,330 papers',
    ]);
  });

  it('labels a chart axis with thousands separators', () => {
    const svg = lineChart(
      [
        { label: '2024', value: 1200 },
        { label: '2025', value: 2400 },
      ],
      { title: 'X', unit: 'RI', format: riText },
    ).text;
    // Quarters of the top tick, exact (1,875, not 1,880).
    for (const t of ['625', '1,250', '1,875', '2,500']) expect(svg).toContain(`>${t}</text>`);
    expect(svg).toContain('<title>2025: 2,400.00 RI</title>');
  });
});

describe('charts', () => {
  const series = [
    { period: '2024', v: 10 },
    { period: '2025', v: 12 },
    { period: '2026', v: 1 },
  ];

  it('knows the open year: the cut-off in the last year shown, not its last day', () => {
    expect(openYearTo(series, '2026-02-25')).toBe('2026-02-25');
    expect(openYearTo(series, '2026-12-31')).toBeUndefined();
    expect(openYearTo(series, '2027-01-10')).toBeUndefined();
    expect(openYearTo(series, null)).toBeUndefined();
    expect(openYearTo([], '2026-02-25')).toBeUndefined();
  });

  it('draws the open year dashed with a hollow dot and names it, never as a plain fall', () => {
    const svg = historyChart(series, (p) => p.v, {
      title: 'X',
      unit: 'RI',
      cutoff: '2026-02-25',
      format: riText,
    }).text;
    // The solid line stops at 2025; the step into 2026 is a dashed segment of its own.
    const solid = /<path d="([^"]+)" fill="none" stroke="#0b5cad" stroke-width="2"\/>/.exec(svg)![1]!;
    expect(solid.split(' L').length).toBe(2);
    expect(svg).toMatch(
      /<path d="M[^"]+" fill="none" stroke="#0b5cad" stroke-width="2" stroke-dasharray="5 4"\/>/,
    );
    expect(svg).toContain(
      'fill="#fff" stroke="#0b5cad" stroke-width="2"><title>2026 (to 2026-02-25): 1.00 RI</title>',
    );
    expect(svg).toContain('2026*</text>');
    expect(svg).toContain('(*2026: papers to 2026-02-25 only, a partial period, dashed)');
    // Whole years: one solid line, no dashes, no note.
    const whole = lineChart(
      series.map((p) => ({ label: p.period, value: p.v })),
      { title: 'X', unit: 'RI' },
    ).text;
    expect(whole).not.toContain('stroke-dasharray');
    expect(whole).not.toContain('partial');
  });

  it('labels the axis with round ticks and the points in the page format', () => {
    const svg = historyChart(series, (p) => p.v, { title: 'X', unit: 'RIS', max: 100, format: risText }).text;
    for (const t of ['0', '25', '50', '75', '100']) expect(svg).toContain(`>${t}</text>`);
    expect(svg).toContain('<title>2024: 10.0 RIS</title>');
  });
});
