import { describe, expect, it } from 'vitest';
import { UsageCounter } from '../../../src/access/usage-counter.js';

/** A store that records what it is given, and fails while `down` is set. */
function fakeStore() {
  const added: [string, [string, number][]][] = [];
  const store = {
    down: false,
    added,
    async addUsage(month: string, calls: ReadonlyMap<string, number>) {
      if (store.down) throw new Error('store down');
      added.push([month, [...calls]]);
    },
  };
  return store;
}

describe('UsageCounter', () => {
  it('counts calls per key and month, across a month boundary, and writes them in one batch per month', async () => {
    let now = new Date('2026-11-30T23:59:59.500Z');
    const store = fakeStore();
    const counter = new UsageCounter(store, { now: () => now, flushMs: 60_000 });
    counter.record('aaaaaaaa');
    counter.record('aaaaaaaa');
    counter.record('bbbbbbbb');
    now = new Date('2026-12-01T00:00:00.100Z');
    counter.record('aaaaaaaa');
    now = new Date('2026-10-15T00:00:00Z'); // a clock set back still counts in its own month
    counter.record('bbbbbbbb');
    await counter.close();
    expect(store.added).toEqual([
      [
        '2026-11',
        [
          ['aaaaaaaa', 2],
          ['bbbbbbbb', 1],
        ],
      ],
      ['2026-12', [['aaaaaaaa', 1]]],
      ['2026-10', [['bbbbbbbb', 1]]],
    ]);
  });

  it('keeps the counts of a failed write for the next flush', async () => {
    const store = fakeStore();
    const counter = new UsageCounter(store, { now: () => new Date('2026-11-23T12:00:00Z'), flushMs: 60_000 });
    counter.record('aaaaaaaa');
    store.down = true;
    await expect(counter.flush()).rejects.toThrow('store down');
    counter.record('aaaaaaaa');
    store.down = false;
    await counter.close();
    expect(store.added).toEqual([['2026-11', [['aaaaaaaa', 2]]]]);
  });
});
