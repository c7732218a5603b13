import { describe, expect, it } from 'vitest';
import { ri, riAsync, riBackground, stop } from '../../helpers/cli.js';
import { sampleDataDir } from '../../helpers/sample.js';
import { Browser, hidden, linkIn, smtpSink } from '../../helpers/web.js';
import { webhookReceiver } from '../../helpers/webhook-receiver.js';
import { tempDir } from '../../helpers/works.js';

describe('the logs of a real ri serve', () => {
  it('never hold an API key, a feed token, a sign-in link, a session, a webhook secret or the quote-signing secret, whatever the requests', async () => {
    const { dataDir } = await sampleDataDir();
    const secret = 'quote-secret-that-must-not-be-logged-0123';
    const sink = await smtpSink();
    const env = {
      STATE_URL: `sqlite:${tempDir('ri-logs-')}/state.sqlite`,
      QUOTE_SECRET: secret,
      LOG_LEVEL: 'debug',
      SMTP_URL: sink.url,
      WEBHOOK_ALLOW_LOOPBACK: 'true',
    };
    const created = ri(['keys', 'create', '--plan', 'professional', '--email', 'logs@example.org'], env);
    expect(created.status).toBe(0);
    const key = created.stdout.trim().split('\n').at(-1)!;
    const server = riBackground(
      ['serve', '--port', '0', '--host', '127.0.0.1', '--data-dir', dataDir],
      env,
      /at (http:\/\/\S+)\/v1/,
    );
    const base = (await server.started)[1]!;
    const bad = `${key.slice(0, -4)}XXXX`;
    for (const [path, k] of [
      ['/v1/elements/Fe/history', key],
      ['/v1/lab/quote?q=Ni%20Fe', key],
      ['/v1/elements/Fe/history', bad],
      ['/v1/research?q=constructor', key],
      ['/v1/nothing', key],
    ] as const)
      await (await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${k}` } })).text();
    await (
      await fetch(`${base}/mcp`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${key}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'get_element_ri', arguments: { symbol: 'Fe' } },
        }),
      })
    ).text();
    // A web sign-in: the link's token, the session and the form tokens stay out of the logs.
    const browser = new Browser(base);
    const form = await (await browser.get('/account')).text();
    await browser.post('/account/sign-in', { email: 'web@example.org', csrf: hidden(form, 'csrf') });
    for (let i = 0; i < 400 && sink.mails.length === 0; i++) await new Promise((r) => setTimeout(r, 50));
    const link = linkIn(sink.mails[0]!);
    const token = new URL(link).searchParams.get('token')!;
    // (The server's PUBLIC_URL says port 0, the port it was asked for: follow the link's path.)
    const confirm = await (await browser.get(`/account/verify?token=${token}`)).text();
    const signedIn = await browser.post('/account/verify', { token, csrf: hidden(confirm, 'csrf') });
    expect(signedIn.status).toBe(303);
    const session = browser.cookies.get('ri_session')!;
    const account = await (await browser.get('/account')).text();
    // A feed token made on the account page, used in feed URLs (opened, refused, revoked), and the
    // API key put where a feed token goes: none of them may reach the logs with the URL.
    const made = await browser.post('/account/feed-tokens', { csrf: hidden(account, 'csrf') });
    const feedToken = /value="(rif_[a-z0-9]{8}_[A-Za-z0-9_-]{43})"/.exec(await made.text())![1]!;
    const feedStatus = async (path: string, t: string) =>
      (await fetch(`${base}${path}${path.includes('?') ? '&' : '?'}token=${t}`)).status;
    expect(await feedStatus('/v1/feeds/rising?kind=element', feedToken)).toBe(200);
    expect(await feedStatus('/v1/feeds/elements/Fe', feedToken)).toBe(200);
    expect(await feedStatus('/v1/feeds/subjects/topic/T10030', feedToken)).toBe(403);
    expect(await feedStatus('/v1/feeds/elements/Fe', key)).toBe(401);
    expect(await feedStatus('/v1/feeds/elements/Fe', `${feedToken.slice(0, -4)}XXXX`)).toBe(401);
    await browser.post(`/account/feed-tokens/${feedToken.slice(4, 12)}/revoke`, {
      csrf: hidden(account, 'csrf'),
      confirm: 'yes',
    });
    expect(await feedStatus('/v1/feeds/elements/Fe', feedToken)).toBe(401);
    // A webhook subscription made on the account page, and a test-send that fails (a 500).
    const receiver = await webhookReceiver({ '/hook': () => 500 });
    expect((await riAsync(['plans', 'set', 'web@example.org', 'personal'], env)).status).toBe(0);
    const subscribed = await browser.post('/account/webhooks', {
      url: `${receiver.base}/hook`,
      subjects: 'element/Fe',
      min_move: '1',
      csrf: hidden(account, 'csrf'),
    });
    const subscription = await subscribed.text();
    const webhookSecret = /value="(whsec_[^"]+)"/.exec(subscription)![1]!;
    const id = /Your new subscription (whs_[0-9a-f]{12})/.exec(subscription)![1]!;
    await browser.post(`/account/webhooks/${id}/test`, { csrf: hidden(account, 'csrf') });
    expect(receiver.at('/hook')).toHaveLength(1);
    await receiver.close();
    await stop(server.child);
    await sink.close();
    const { stdout, stderr } = server.output();
    const logs = stdout + stderr;
    expect(logs).toMatch(/"msg":"request"/); // the request log was on
    const secretPart = key.split('_').at(-1)!;
    for (const s of [
      feedToken,
      feedToken.split('_').at(-1)!,
      `${feedToken.slice(0, -4)}XXXX`,
      key,
      bad,
      secretPart,
      secret,
      webhookSecret,
      webhookSecret.slice('whsec_'.length),
      token,
      session,
      hidden(form, 'csrf'),
      hidden(account, 'csrf'),
    ])
      expect(logs).not.toContain(s);
    // The feed requests were logged, by their path alone.
    expect(logs).toMatch(/"path":"\/v1\/feeds\/elements\/Fe","status":401/);
  });
});
