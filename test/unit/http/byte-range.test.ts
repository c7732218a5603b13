import { describe, expect, it } from 'vitest';
import { byteRange } from '../../../src/http/byte-range.js';

const ETAG = '"abc"';
const range = (header: string | undefined, size = 100, ifRange?: string) =>
  byteRange(header, size, ifRange, ETAG);

describe('byteRange (RFC 9110 14.2, one range)', () => {
  it('reads bytes=N-M, bytes=N- and bytes=-N, an end past the size cut to it', () => {
    expect(range('bytes=0-9')).toEqual({ kind: 'part', start: 0, end: 9 });
    expect(range('bytes=40-')).toEqual({ kind: 'part', start: 40, end: 99 });
    expect(range('bytes=-8')).toEqual({ kind: 'part', start: 92, end: 99 });
    expect(range('bytes=-500')).toEqual({ kind: 'part', start: 0, end: 99 });
    expect(range('bytes=90-500')).toEqual({ kind: 'part', start: 90, end: 99 });
    expect(range('BYTES = 1 - 2')).toEqual({ kind: 'part', start: 1, end: 2 });
  });

  it('a start past the end, or an empty suffix, is unsatisfiable', () => {
    expect(range('bytes=100-')).toEqual({ kind: 'unsatisfiable' });
    expect(range('bytes=100-200')).toEqual({ kind: 'unsatisfiable' });
    expect(range('bytes=-0')).toEqual({ kind: 'unsatisfiable' });
    expect(range('bytes=-5', 0)).toEqual({ kind: 'unsatisfiable' });
  });

  it('answers the whole for no Range, several ranges, another unit, nonsense, or another If-Range', () => {
    for (const header of [undefined, 'bytes=0-1,5-6', 'items=0-1', 'bytes=-', 'bytes=5-2', 'bytes=a-b'])
      expect([header, range(header)]).toEqual([header, { kind: 'whole' }]);
    expect(range('bytes=0-9', 100, '"other"')).toEqual({ kind: 'whole' });
    expect(range('bytes=0-9', 100, ETAG)).toEqual({ kind: 'part', start: 0, end: 9 });
  });
});
