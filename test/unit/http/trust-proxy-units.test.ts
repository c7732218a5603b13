import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/config/config.js';
import { clientIp, type TrustProxy } from '../../../src/http/rate-limit.js';
import { canonicalIp, invalidRanges, ipMatcher } from '../../../src/util/ip-ranges.js';

/**
 * TRUST_PROXY as the proxies' addresses and CIDR ranges: X-Forwarded-For is read only when the
 * socket's peer is one of them, and the client is the right-most entry that is not. No services:
 * the same over real HTTP is in trust-proxy.test.ts.
 */
describe('TRUST_PROXY parsing', () => {
  const parse = (v: string) => loadConfig({ TRUST_PROXY: v }).TRUST_PROXY;

  it('takes false, true, a hop count, or addresses and CIDR ranges (IPv4 and IPv6)', () => {
    expect(loadConfig({}).TRUST_PROXY).toBe(0);
    expect(parse('false')).toBe(0);
    expect(parse('true')).toBe(1);
    expect(parse('2')).toBe(2);
    expect(parse('10.0.0.0/8,127.0.0.1/32')).toEqual(['10.0.0.0/8', '127.0.0.1/32']);
    expect(parse(' 10.0.0.0/8 , 2001:db8::/32, ::1 ,192.0.2.7')).toEqual([
      '10.0.0.0/8',
      '2001:db8::/32',
      '::1',
      '192.0.2.7',
    ]);
  });

  it('refuses anything else, naming the variable and the bad entry', () => {
    for (const bad of [
      'yes',
      '10.0.0.0/33',
      '10.0.0.0/8,nope',
      '2001:db8::/129',
      '1.2.3.4/8/1',
      ',',
      '100',
    ]) {
      expect(() => parse(bad), bad).toThrow(ConfigError);
      expect(() => parse(bad), bad).toThrow(/TRUST_PROXY/);
    }
    expect(() => parse('10.0.0.0/8,nope')).toThrow(/'nope' is neither/);
  });
});

describe('the one address matcher', () => {
  it('matches IPv4 and IPv6 ranges, IPv4-mapped addresses, and addresses with a port or brackets', () => {
    const m = ipMatcher(['10.0.0.0/8', '2001:db8::/32', '192.0.2.7', 'fe80::1']);
    expect(m('10.255.0.1')).toBe(true);
    expect(m('11.0.0.1')).toBe(false);
    expect(m('::ffff:10.1.2.3')).toBe(true);
    expect(m('2001:db8:ffff::1')).toBe(true);
    expect(m('2001:db9::1')).toBe(false);
    expect(m('2001:DB8:0:0::5')).toBe(true);
    expect(m('192.0.2.7')).toBe(true);
    expect(m('192.0.2.8')).toBe(false);
    expect(m('fe80::1%eth0')).toBe(true);
    expect(m('[2001:db8::9]:443')).toBe(true);
    expect(m('10.0.0.1:8080')).toBe(true);
    expect(m('not-an-ip')).toBe(false);
    expect(m('10.0.0.256')).toBe(false);
    // An IPv4 range never matches an IPv6 address outside ::ffff:0:0/96, nor the reverse.
    expect(ipMatcher(['0.0.0.0/0'])('2001:db8::1')).toBe(false);
    expect(ipMatcher(['::/0'])('10.0.0.1')).toBe(false);
    expect(ipMatcher(['::/0'])('::1')).toBe(true);
  });

  it('writes addresses one way (one rate-limit bucket per address)', () => {
    expect(canonicalIp('2001:DB8:0:0:0:0:0:1')).toBe('2001:db8::1');
    expect(canonicalIp('::ffff:192.0.2.1')).toBe('192.0.2.1');
    expect(canonicalIp('[::1]:80')).toBe('::1');
    expect(canonicalIp('2001:db8:0:1:0:0:0:1')).toBe('2001:db8:0:1::1');
    expect(canonicalIp('1:0:0:2:0:0:0:3')).toBe('1:0:0:2::3');
    expect(canonicalIp('1:2:3:4:5:6:7:8')).toBe('1:2:3:4:5:6:7:8');
    expect(canonicalIp('1:2:3:4:5:6:7::')).toBe('1:2:3:4:5:6:7:0');
    expect(canonicalIp('::')).toBe('::');
    expect(canonicalIp('x')).toBeNull();
    expect(invalidRanges(['10.0.0.0/8', '::1/128', 'x', '10.0.0.0/-1'])).toEqual(['x', '10.0.0.0/-1']);
  });
});

describe('clientIp with proxy ranges', () => {
  const ask = async (trust: TrustProxy, peer: string, xff?: string) => {
    const app = new Hono().get('/', (c) => c.text(clientIp(c, trust)));
    const res = await app.request('/', xff === undefined ? {} : { headers: { 'x-forwarded-for': xff } }, {
      incoming: { socket: { remoteAddress: peer } },
    });
    return res.text();
  };
  const proxies = ['10.0.0.0/8', '2001:db8:1::/48'];

  it('ignores X-Forwarded-For from a peer that is not a trusted proxy', async () => {
    expect(await ask(proxies, '203.0.113.9', '1.1.1.1')).toBe('203.0.113.9');
    expect(await ask(proxies, '::ffff:203.0.113.9', '10.0.0.1')).toBe('203.0.113.9');
  });

  it('takes the right-most entry that is not a trusted proxy, never a forged left-most one', async () => {
    expect(await ask(proxies, '10.0.0.2', '6.6.6.6, 198.51.100.4')).toBe('198.51.100.4');
    expect(await ask(proxies, '10.0.0.2', '6.6.6.6, 198.51.100.4, 10.0.0.7, 10.9.9.9')).toBe('198.51.100.4');
    expect(await ask(proxies, '::ffff:10.0.0.2', '198.51.100.4')).toBe('198.51.100.4');
    expect(await ask(proxies, '2001:db8:1::5', '2001:DB8:2::1')).toBe('2001:db8:2::1');
  });

  it('stops at the last trusted address when the entries run out or are not addresses', async () => {
    expect(await ask(proxies, '10.0.0.2')).toBe('10.0.0.2');
    expect(await ask(proxies, '10.0.0.2', '10.0.0.9, 10.0.0.7')).toBe('10.0.0.9');
    expect(await ask(proxies, '10.0.0.2', 'junk, 10.0.0.7')).toBe('10.0.0.7');
    expect(await ask(proxies, '10.0.0.2', '1.1.1.1, junk')).toBe('10.0.0.2');
  });

  it('a hop count still reads from the right, and a non-address entry falls back to the socket', async () => {
    expect(await ask(1, '10.0.0.2', '6.6.6.6, 198.51.100.4')).toBe('198.51.100.4');
    expect(await ask(2, '10.0.0.2', '6.6.6.6, 198.51.100.4')).toBe('6.6.6.6');
    expect(await ask(1, '10.0.0.2', '6.6.6.6, junk')).toBe('10.0.0.2');
    expect(await ask(0, '10.0.0.2', '6.6.6.6')).toBe('10.0.0.2');
  });
});
