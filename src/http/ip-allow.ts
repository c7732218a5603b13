/**
 * Who may read operator-only addresses (/metrics): loopback always, and the addresses or IPv4
 * CIDR ranges of METRICS_ALLOW. Judged on the socket's peer address, never on a header.
 */
export function ipAllowed(ip: string, allow: readonly string[]): boolean {
  const bare = ip.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/i, '');
  if (bare === '::1' || bare.startsWith('127.')) return true;
  return allow.some((rule) => {
    const [net, bits] = rule.split('/');
    if (bits === undefined) return net === bare;
    const a = ipv4(bare);
    const b = ipv4(net!);
    const n = Number(bits);
    if (a === null || b === null || !(n >= 0 && n <= 32)) return false;
    const mask = n === 0 ? 0 : (~0 << (32 - n)) >>> 0;
    return (a & mask) >>> 0 === (b & mask) >>> 0;
  });
}

function ipv4(s: string): number | null {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(s);
  if (!m) return null;
  const parts = m.slice(1).map(Number);
  if (parts.some((p) => p > 255)) return null;
  return ((parts[0]! << 24) | (parts[1]! << 16) | (parts[2]! << 8) | parts[3]!) >>> 0;
}
