import { describe, expect, it } from 'vitest';
import { ServiceError } from '../../../src/core/errors.js';
import { checkWebhookUrl, type Resolver } from '../../../src/webhooks/url-check.js';

/** A resolver that answers from a table, as DNS would. */
const dns =
  (table: Record<string, string[]>): Resolver =>
  async (host) => {
    const found = table[host];
    if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return found.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };

const resolver = dns({
  'hooks.example.org': ['93.184.215.14'],
  'v6.example.org': ['2606:2800:21f:cb07:6820:80da:af6b:8b2c'],
  'internal.example.org': ['10.1.2.3'],
  'mixed.example.org': ['93.184.215.14', '192.168.1.10'],
  'metadata.example.org': ['169.254.169.254'],
  'ula.example.org': ['fd00:ec2::254'],
  localhost: ['127.0.0.1', '::1'],
});

const strict = { allowLoopback: false };
const loopbackAllowed = { allowLoopback: true };

async function refusal(url: string, rules = strict): Promise<string> {
  try {
    await checkWebhookUrl(url, rules, resolver);
  } catch (error) {
    expect(error).toBeInstanceOf(ServiceError);
    expect((error as ServiceError).code).toBe('webhook_url_refused');
    expect((error as ServiceError).status).toBe(400);
    return (error as ServiceError).detail;
  }
  throw new Error(`${url} was not refused`);
}

describe('where a webhook may be sent', () => {
  it('takes https to a public address, and gives the address to connect to', async () => {
    const { url, address } = await checkWebhookUrl('https://hooks.example.org/ri?x=1', strict, resolver);
    expect(url.href).toBe('https://hooks.example.org/ri?x=1');
    expect(address).toEqual({ address: '93.184.215.14', family: 4 });
    expect((await checkWebhookUrl('https://v6.example.org/', strict, resolver)).address.family).toBe(6);
  });

  it('refuses plain http, other schemes, credentials and what is not a URL', async () => {
    expect(await refusal('http://hooks.example.org/ri')).toMatch(/https only/);
    expect(await refusal('ftp://hooks.example.org/ri')).toMatch(/https only/);
    expect(await refusal('https://user:pw@hooks.example.org/')).toMatch(/user name or password/);
    expect(await refusal('not a url')).toMatch(/not a URL/);
    expect(await refusal(`https://hooks.example.org/${'a'.repeat(2000)}`)).toMatch(/longer than/);
  });

  it('refuses private, loopback, link-local (metadata), unique-local and reserved addresses', async () => {
    for (const url of [
      'https://10.0.0.1/',
      'https://172.16.5.4/',
      'https://192.168.0.1/',
      'https://127.0.0.1/',
      'https://[::1]/',
      'https://169.254.169.254/latest/meta-data/',
      'https://[fe80::1]/',
      'https://[fd12:3456::1]/',
      'https://100.64.0.1/',
      'https://0.0.0.0/',
      'https://[::ffff:10.0.0.1]/',
      'https://internal.example.org/',
      'https://metadata.example.org/',
      'https://ula.example.org/',
      'https://localhost/',
    ])
      expect(await refusal(url)).toMatch(/private, loopback, link-local or reserved/);
  });

  it('refuses a name of which any one address is refused', async () => {
    expect(await refusal('https://mixed.example.org/')).toMatch(/192\.168\.1\.10/);
  });

  it('refuses a name that does not resolve', async () => {
    expect(await refusal('https://nowhere.example.org/')).toMatch(/does not resolve/);
  });

  it('with WEBHOOK_ALLOW_LOOPBACK: loopback, and plain http to it only', async () => {
    expect(
      (await checkWebhookUrl('http://127.0.0.1:8080/hook', loopbackAllowed, resolver)).address.address,
    ).toBe('127.0.0.1');
    expect((await checkWebhookUrl('http://localhost:8080/hook', loopbackAllowed, resolver)).url.port).toBe(
      '8080',
    );
    expect(await refusal('http://hooks.example.org/', loopbackAllowed)).toMatch(/loopback addresses only/);
    expect(await refusal('https://10.0.0.1/', loopbackAllowed)).toMatch(/private/);
  });
});
