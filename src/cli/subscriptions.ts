import { parseArgs } from 'node:util';
import type { StateStore } from '../access/state-store.js';
import { loadConfig } from '../config/config.js';
import { dataPaths } from '../config/paths.js';
import { ServiceError } from '../core/errors.js';
import { readPointer } from '../snapshot/folder.js';
import { subscribe, testSend, unsubscribe, webhookSettings } from '../webhooks/subscriptions.js';
import { CliError, parsedOrCliError, printedHelp } from './cli-error.js';
import { STATE_USAGE, withStore } from './keys.js';
import { printTable } from './table.js';

const USAGE = `usage: ri subscriptions create --email E --url URL --subjects KIND/ID,... [--min-move N]
       ri subscriptions list [--email E]
       ri subscriptions delete ID
       ri subscriptions test ID

create  subscribes the account with that email to the changes of the subjects (element/Fe,
        topic/T10074, keyword/<slug>; as /v1/changes names them) that move by at least N RIS
        points (default 0) at a publication, posted to URL (https). Its signing secret (whsec_...)
        is printed alone on the last line of stdout: the only time it is shown.
list    the subscriptions (of one account with --email): id, account, url, subjects, least move.
delete  deletes the subscription with that id (whs_...): nothing is sent for it afterwards.
test    sends it a webhook.test event now and says how it went (exit 1 when not delivered).

The account's plan limits how many it holds (/pricing); the URL is checked as at each send
(WEBHOOK_ALLOW_LOOPBACK allows loopback and plain http to it).

${STATE_USAGE}`;

export async function run(args: string[]): Promise<number> {
  const { values, positionals } = parsedOrCliError(() =>
    parseArgs({
      args,
      allowPositionals: true,
      options: {
        email: { type: 'string' },
        url: { type: 'string' },
        subjects: { type: 'string' },
        'min-move': { type: 'string' },
        'data-dir': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }),
  );
  if (printedHelp(values, USAGE)) return 0;
  const [sub, ...rest] = positionals;
  if (sub === undefined) throw new CliError(`no subcommand given\n${USAGE}`);
  if (!['create', 'list', 'delete', 'test'].includes(sub))
    throw new CliError(`unknown subcommand 'subscriptions ${sub}' (expected create, list, delete or test)`);
  const config = loadConfig();
  const dataDir = values['data-dir'] ?? config.DATA_DIR;
  const settings = webhookSettings(config);
  // A refusal of the checks is the problem's stable code and detail, exit 1.
  const answered = (fn: (store: StateStore) => Promise<number>) =>
    withStore(dataDir, async (store) => {
      try {
        return await fn(store);
      } catch (error) {
        if (error instanceof ServiceError) throw new CliError(`${error.code}: ${error.detail}`, 1);
        throw error;
      }
    });

  if (sub === 'create') {
    if (rest.length > 0) throw new CliError(`unexpected argument '${rest[0]}' for subscriptions create`);
    const { email, url, subjects } = values;
    if (email === undefined || url === undefined || subjects === undefined)
      throw new CliError('subscriptions create needs --email, --url and --subjects');
    return answered(async (store) => {
      const account = await store.findAccountByEmail(email);
      if (!account) throw new CliError(`no account with email ${email.trim().toLowerCase()}`, 1);
      const { subscription, secret } = await subscribe(
        store,
        account,
        { url, subjects, minMove: values['min-move'] ?? '' },
        {
          edition: config.EDITION,
          settings,
          snapshot: null,
          version: readPointer(dataPaths(dataDir).snapshots, 'CURRENT'),
        },
      );
      process.stderr.write(
        `created subscription ${subscription.id} (${subscription.subjects.join(', ')}, least move ${subscription.minMove}); its secret is shown once, below\n`,
      );
      process.stdout.write(`${secret}\n`);
      return 0;
    });
  }
  if (values.url !== undefined || values.subjects !== undefined || values['min-move'] !== undefined)
    throw new CliError(`--url, --subjects and --min-move are options of subscriptions create, not ${sub}`);
  if (sub === 'list') {
    if (rest.length > 0) throw new CliError(`unexpected argument '${rest[0]}' for subscriptions list`);
    return answered(async (store) => {
      let accountId: string | undefined;
      if (values.email !== undefined) {
        const account = await store.findAccountByEmail(values.email);
        if (!account) throw new CliError(`no account with email ${values.email.trim().toLowerCase()}`, 1);
        accountId = account.id;
      }
      const subscriptions = await store.listWebhookSubscriptions(accountId);
      const header = ['ID', 'ACCOUNT', 'PLAN', 'MIN_MOVE', 'CREATED', 'URL', 'SUBJECTS'];
      const rows = subscriptions.map((s) => [
        s.id,
        s.accountId,
        s.plan,
        String(s.minMove),
        s.createdAt,
        s.url,
        s.subjects.join(','),
      ]);
      printTable(header, rows, 'no subscriptions');
      return 0;
    });
  }
  if (values.email !== undefined) throw new CliError(`--email is not an option of subscriptions ${sub}`);
  if (rest.length !== 1) throw new CliError(`subscriptions ${sub} needs exactly one ID`);
  const id = rest[0]!.trim();
  if (sub === 'delete')
    return answered(async (store) => {
      await unsubscribe(store, id);
      process.stderr.write(`deleted subscription ${id}\n`);
      return 0;
    });
  return answered(async (store) => {
    const sent = await testSend(store, id, undefined, settings);
    if (sent.ok) {
      process.stdout.write(`delivered ${sent.eventId}: HTTP ${sent.status}\n`);
      return 0;
    }
    process.stdout.write(`not delivered ${sent.eventId}: ${sent.error}\n`);
    return 1;
  });
}
