/**
 * The part of a file a request asks for with `Range: bytes=...` (RFC 9110 14.2), so that a
 * download cut off is resumed where it stopped: one range, answered 206 with Content-Range. What
 * this does not serve as asked is answered whole (200), as the RFC lets a server do: several
 * ranges (no client of ours asks for them), another unit, a malformed header, or an If-Range
 * naming another version of the file. A range that starts past the end is unsatisfiable (416).
 */
export type ByteRange =
  | { kind: 'whole' }
  | { kind: 'part'; start: number; end: number }
  | { kind: 'unsatisfiable' };

export function byteRange(
  header: string | undefined,
  size: number,
  ifRange: string | undefined,
  etag: string,
): ByteRange {
  if (header === undefined) return { kind: 'whole' };
  // If-Range: the range only of this very file (a strong validator); otherwise the whole of it.
  if (ifRange !== undefined && ifRange.trim() !== etag) return { kind: 'whole' };
  const m = /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(header);
  if (!m || (m[1] === '' && m[2] === '')) return { kind: 'whole' };
  if (m[1] === '') {
    // bytes=-N: the last N bytes.
    const suffix = Number(m[2]);
    if (suffix === 0 || size === 0) return { kind: 'unsatisfiable' };
    return { kind: 'part', start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(m[1]);
  const end = m[2] === '' ? size - 1 : Number(m[2]);
  if (m[2] !== '' && end < start) return { kind: 'whole' };
  if (start >= size) return { kind: 'unsatisfiable' };
  return { kind: 'part', start, end: Math.min(end, size - 1) };
}
