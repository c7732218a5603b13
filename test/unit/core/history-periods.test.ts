import { describe, expect, it } from 'vitest';
import { periodOfDay, periodsBetween } from '../../../src/core/history.js';

describe('the periods of a contiguous history', () => {
  it('runs over year, month and leap-day boundaries, both ends included', () => {
    expect(periodsBetween('2019', '2022', 'yearly')).toEqual(['2019', '2020', '2021', '2022']);
    expect(periodsBetween('2023-11', '2024-02', 'monthly')).toEqual([
      '2023-11',
      '2023-12',
      '2024-01',
      '2024-02',
    ]);
    expect(periodsBetween('2024-02-27', '2024-03-01', 'daily')).toEqual([
      '2024-02-27',
      '2024-02-28',
      '2024-02-29',
      '2024-03-01',
    ]);
    const days = (Date.UTC(2026, 1, 25) - Date.UTC(1951, 4, 28)) / 86_400_000 + 1;
    expect(periodsBetween('1951-05-28', '2026-02-25', 'daily')).toHaveLength(days);
    expect(periodsBetween('2024-03', '2024-03', 'monthly')).toEqual(['2024-03']);
  });

  it('names the period a day falls in', () => {
    expect(['yearly', 'monthly', 'daily'].map((r) => periodOfDay('2026-02-25', r as 'daily'))).toEqual([
      '2026',
      '2026-02',
      '2026-02-25',
    ]);
  });
});
