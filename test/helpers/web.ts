import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface Mail {
  to: string[];
  raw: string;
}

/** A real SMTP server on loopback that keeps every message it receives. */
export async function smtpSink(): Promise<{ url: string; mails: Mail[]; close(): Promise<void> }> {
  const mails: Mail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        mails.push({
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString('utf8'),
        });
        callback();
      });
    },
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.server.address() as AddressInfo).port;
  return {
    url: `smtp://127.0.0.1:${port}`,
    mails,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** The sign-in link in a mail (quoted-printable soft breaks undone). */
export function linkIn(mail: Mail): string {
  const text = mail.raw.replace(/=\r?\n/g, '').replace(/=3D/g, '=');
  const m = /https?:\/\/\S+\/account\/verify\?token=[A-Za-z0-9_-]+/.exec(text);
  if (!m) throw new Error(`no sign-in link in mail:\n${mail.raw}`);
  return m[0];
}

/** A browser-like client: keeps cookies, does not follow redirects, sends forms. */
export class Browser {
  readonly cookies = new Map<string, string>();
  constructor(readonly base: string) {}

  async get(path: string, headers: Record<string, string> = {}): Promise<Response> {
    return this.send(path, { method: 'GET', headers });
  }

  async post(
    path: string,
    form: Record<string, string>,
    headers: Record<string, string> = {},
  ): Promise<Response> {
    return this.send(path, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: this.base, ...headers },
      body: new URLSearchParams(form).toString(),
    });
  }

  private async send(path: string, init: { method: string; headers: Record<string, string>; body?: string }) {
    const cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    const res = await fetch(path.startsWith('http') ? path : `${this.base}${path}`, {
      ...init,
      headers: { ...(cookie ? { cookie } : {}), ...init.headers },
      redirect: 'manual',
    });
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq);
      const value = pair!.slice(eq + 1);
      if (value === '' || /max-age=0/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return res;
  }
}

/** The value of a hidden input in a page. */
export function hidden(html: string, name: string): string {
  const m = new RegExp(`name="${name}" value="([^"]*)"`).exec(html);
  if (!m) throw new Error(`no ${name} field in page`);
  return m[1]!;
}

/**
 * Signs a browser in as `email` the way a reader does: asks for the link on /account, takes it
 * from the mail sink and confirms it. The account is made (free) at the first sign-in.
 */
export async function signInByMail(browser: Browser, mails: Mail[], email: string): Promise<void> {
  const before = mails.filter((m) => m.to.includes(email)).length;
  const form = await (await browser.get('/account')).text();
  const asked = await browser.post('/account/sign-in', { email, csrf: hidden(form, 'csrf') });
  if (asked.status !== 200) throw new Error(`sign-in request answered ${asked.status}`);
  let mail: Mail | undefined;
  for (let i = 0; i < 400 && !mail; i++) {
    mail = mails.filter((m) => m.to.includes(email))[before];
    if (!mail) await new Promise((r) => setTimeout(r, 50));
  }
  if (!mail) throw new Error(`no mail to ${email}`);
  const confirm = await (await browser.get(linkIn(mail))).text();
  const done = await browser.post('/account/verify', {
    token: hidden(confirm, 'token'),
    csrf: hidden(confirm, 'csrf'),
  });
  if (done.status !== 303) throw new Error(`sign-in confirmation answered ${done.status}`);
}
