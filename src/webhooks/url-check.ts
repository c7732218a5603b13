/**
 * Where a webhook may be sent, checked when a subscription is saved and again at each send (a
 * name's addresses change): https only; no address that reaches the service's own network
 * (private, loopback, link-local, unique-local, shared, multicast, reserved, the cloud metadata
 * address 169.254.169.254 among the link-local ones), every address of the name checked. The
 * sender then connects to the address checked here (deliver.ts), so a second lookup cannot
 * answer another one (DNS rebinding). WEBHOOK_ALLOW_LOOPBACK lets loopback addresses through,
 * and plain http to them (development and tests).
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { ServiceError } from '../core/errors.js';
import { canonicalIp, ipMatcher } from '../util/ip-ranges.js';

/** Addresses no webhook is sent to (RFC 6890 special-purpose ranges, and their IPv6 counterparts). */
const REFUSED_RANGES = [
  '0.0.0.0/8',
  '10.0.0.0/8',
  '100.64.0.0/10',
  '127.0.0.0/8',
  '169.254.0.0/16',
  '172.16.0.0/12',
  '192.0.0.0/24',
  '192.0.2.0/24',
  '192.88.99.0/24',
  '192.168.0.0/16',
  '198.18.0.0/15',
  '198.51.100.0/24',
  '203.0.113.0/24',
  '224.0.0.0/4',
  '240.0.0.0/4',
  '::/128',
  '::1/128',
  '64:ff9b::/96',
  '64:ff9b:1::/48',
  '100::/64',
  '2001::/23',
  '2001:db8::/32',
  '2002::/16',
  'fc00::/7',
  'fe80::/10',
  'fec0::/10',
  'ff00::/8',
];
const LOOPBACK_RANGES = ['127.0.0.0/8', '::1/128'];

const refused = ipMatcher(REFUSED_RANGES);
const loopback = ipMatcher(LOOPBACK_RANGES);

/** The longest webhook URL taken. */
const MAX_WEBHOOK_URL_LENGTH = 2000;

export interface UrlRules {
  /** WEBHOOK_ALLOW_LOOPBACK: loopback addresses allowed, and http to them. */
  allowLoopback: boolean;
}

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** A name's addresses (every one); the system resolver by default. */
export type Resolver = (host: string) => Promise<ResolvedAddress[]>;

const systemResolver: Resolver = async (host) =>
  (await dnsLookup(host, { all: true, verbatim: true })).map((a) => ({
    address: a.address,
    family: a.family === 6 ? 6 : 4,
  }));

/** A URL refused as a webhook's target: 400 `webhook_url_refused`, saying why. */
function refusedUrl(detail: string): ServiceError {
  return new ServiceError('webhook_url_refused', detail, { parameter: 'url' });
}

/** The URL's form alone (no lookup): https, or http to a loopback address when allowed. */
function parseWebhookUrl(text: string, rules: UrlRules): URL {
  if (text.length > MAX_WEBHOOK_URL_LENGTH)
    throw refusedUrl(`The URL is longer than ${MAX_WEBHOOK_URL_LENGTH} characters.`);
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    throw refusedUrl('That is not a URL: expected https://host/path.');
  }
  if (url.username !== '' || url.password !== '')
    throw refusedUrl('The URL holds a user name or password: webhooks are signed, so none is needed.');
  if (url.protocol === 'http:') {
    if (!rules.allowLoopback)
      throw refusedUrl('Webhooks are sent over https only: the URL must start with https://.');
  } else if (url.protocol !== 'https:') {
    throw refusedUrl(`Webhooks are sent over https only, not ${url.protocol.replace(':', '')}.`);
  }
  return url;
}

/**
 * The URL checked and the address to connect to: every address its host resolves to must be
 * allowed (one refused address refuses the URL: the resolver could answer it next time).
 */
export async function checkWebhookUrl(
  text: string,
  rules: UrlRules,
  resolve: Resolver = systemResolver,
): Promise<{ url: URL; address: ResolvedAddress }> {
  const url = parseWebhookUrl(text, rules);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: ResolvedAddress[];
  if (isIP(host) !== 0) addresses = [{ address: host, family: isIP(host) === 6 ? 6 : 4 }];
  else {
    try {
      addresses = await resolve(host);
    } catch {
      throw refusedUrl(`The host ${host} does not resolve to an address.`);
    }
    if (addresses.length === 0) throw refusedUrl(`The host ${host} does not resolve to an address.`);
  }
  for (const a of addresses) {
    const text = canonicalIp(a.address) ?? a.address;
    const isLoopback = loopback(a.address);
    if (isLoopback && rules.allowLoopback) continue;
    if (refused(a.address) || isLoopback)
      throw refusedUrl(
        `The host ${host} resolves to ${text}, a private, loopback, link-local or reserved address: webhooks are sent to public addresses only.`,
      );
    if (url.protocol === 'http:')
      throw refusedUrl('Plain http is allowed to loopback addresses only: the URL must start with https://.');
  }
  return { url, address: addresses[0]! };
}
