/**
 * Addresses and CIDR ranges, IPv4 and IPv6: one parser and one matcher for every list of them
 * (METRICS_ALLOW, the proxies of TRUST_PROXY). An IPv4-mapped IPv6 address (::ffff:10.0.0.1) is
 * the IPv4 address; a port or brackets around an address (as some proxies write them) are dropped.
 */
import { isIPv4, isIPv6 } from 'node:net';

interface Address {
  v6: boolean;
  n: bigint;
}

interface Range extends Address {
  /** Prefix length: 0-32 (IPv4) or 0-128 (IPv6). */
  bits: number;
}

/** Who may read operator-only addresses (/metrics): loopback always, and the addresses or ranges of `allow`. */
export function ipAllowed(ip: string, allow: readonly string[]): boolean {
  const a = parseAddress(ip);
  if (a === null) return false;
  if (a.v6 ? a.n === 1n : a.n >> 24n === 127n) return true;
  return compile(allow)(a);
}

/**
 * A test of addresses against a list of addresses and CIDR ranges (entries that are neither
 * never match; validate a configured list with invalidRanges). Compiled once per list.
 */
export function ipMatcher(list: readonly string[]): (ip: string) => boolean {
  const inList = compile(list);
  return (ip) => {
    const a = parseAddress(ip);
    return a !== null && inList(a);
  };
}

/** The entries of a list that are neither an address nor a CIDR range (for configuration errors). */
export function invalidRanges(list: readonly string[]): string[] {
  return list.filter((entry) => parseRange(entry) === null);
}

/**
 * The canonical text of an address (lower case, IPv6 compressed, IPv4-mapped as IPv4), or null when
 * it is not one. Remembered per distinct text: every request without a key asks it of its peer's
 * address (the rate limit's bucket), and parsing one (regexes, BigInt) was about 3% of a cached
 * answer's CPU. Bounded: past 4,096 texts the map starts afresh.
 */
export function canonicalIp(text: string): string | null {
  let known = canonical.get(text);
  if (known === undefined) {
    const a = parseAddress(text);
    known = a === null ? null : format(a);
    if (canonical.size >= 4096) canonical.clear();
    canonical.set(text, known);
  }
  return known;
}
const canonical = new Map<string, string | null>();

const compiled = new WeakMap<readonly string[], (a: Address) => boolean>();

function compile(list: readonly string[]): (a: Address) => boolean {
  let test = compiled.get(list);
  if (!test) {
    const ranges = list.map(parseRange).filter((r): r is Range => r !== null);
    test = (a) => ranges.some((r) => inRange(a, r));
    compiled.set(list, test);
  }
  return test;
}

function inRange(a: Address, r: Range): boolean {
  if (a.v6 !== r.v6) return false;
  const shift = BigInt((r.v6 ? 128 : 32) - r.bits);
  return a.n >> shift === r.n >> shift;
}

function parseRange(text: string): Range | null {
  const [net, bits, extra] = text.trim().split('/');
  if (extra !== undefined || net === undefined) return null;
  const a = parseAddress(net);
  if (a === null) return null;
  const max = a.v6 ? 128 : 32;
  if (bits === undefined) return { ...a, bits: max };
  if (!/^\d{1,3}$/.test(bits) || Number(bits) > max) return null;
  return { ...a, bits: Number(bits) };
}

function parseAddress(text: string): Address | null {
  let s = text.trim();
  // [v6]:port or [v6], v4:port; a zone (fe80::1%eth0) names an interface, not an address.
  const bracketed = /^\[([^\]]+)\](?::\d{1,5})?$/.exec(s);
  if (bracketed) s = bracketed[1]!;
  else if (/^\d+\.\d+\.\d+\.\d+:\d{1,5}$/.test(s)) s = s.slice(0, s.lastIndexOf(':'));
  s = s.replace(/%.*$/, '');
  if (isIPv4(s)) return { v6: false, n: BigInt(ipv4(s)) };
  if (!isIPv6(s)) return null;
  const n = ipv6(s);
  // IPv4-mapped (::ffff:a.b.c.d): the IPv4 address.
  if (n >> 32n === 0xffffn) return { v6: false, n: n & 0xffffffffn };
  return { v6: true, n };
}

function ipv4(s: string): number {
  return s.split('.').reduce((n, part) => n * 256 + Number(part), 0);
}

/** A valid IPv6 text (node:net said so) as a 128-bit number. */
function ipv6(s: string): bigint {
  let text = s;
  const tail = text.slice(text.lastIndexOf(':') + 1);
  if (tail.includes('.')) {
    const v4 = ipv4(tail);
    text = `${text.slice(0, text.length - tail.length)}${(v4 >>> 16).toString(16)}:${(v4 & 0xffff).toString(16)}`;
  }
  const [left, right] = text.split('::') as [string, string | undefined];
  const head = left === '' ? [] : left.split(':');
  const rest = right === undefined || right === '' ? [] : right.split(':');
  const groups =
    right === undefined ? head : [...head, ...Array(8 - head.length - rest.length).fill('0'), ...rest];
  return groups.reduce((n, g) => (n << 16n) | BigInt(Number.parseInt(g, 16)), 0n);
}

function format(a: Address): string {
  if (!a.v6) return [24n, 16n, 8n, 0n].map((s) => String((a.n >> s) & 255n)).join('.');
  const groups = Array.from({ length: 8 }, (_, i) => Number((a.n >> BigInt(112 - 16 * i)) & 0xffffn));
  // RFC 5952: the longest run of two or more zero groups becomes '::'.
  let best = { at: -1, len: 1 };
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > best.len) best = { at: i, len: j - i };
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (best.at < 0) return hex.join(':');
  return `${hex.slice(0, best.at).join(':')}::${hex.slice(best.at + best.len).join(':')}`;
}
