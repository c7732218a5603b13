import { parseArgs } from 'node:util';
import { PREFIX_PATTERN } from '../access/api-keys.js';
import type { Account, StateStore } from '../access/state-store.js';
import { CliError, parsedOrCliError, printedHelp } from './cli-error.js';
import { STATE_USAGE, withStore } from './keys.js';
import { printTable } from './table.js';

const USAGE = `usage: ri feed-tokens create --email E
       ri feed-tokens list [--email E]
       ri feed-tokens revoke PREFIX

create  makes a feed token for the account with that email: what a feed's or a badge's URL
        carries (token=rif_...), since a feed reader or an <img> sends no header. It opens the
        feeds and badges the account's plan opens, nothing else. It is printed alone on the last
        line of stdout: the only time it is shown; only its hash is stored.
list    the feed tokens (of one account with --email): prefix, account, plan, created, revoked
        (never the token or its hash).
revoke  revokes the token with that prefix (the 8 characters after 'rif_'), at once for every
        server, a feed or badge the response cache holds included.

${STATE_USAGE}`;

export async function run(args: string[]): Promise<number> {
  const { values, positionals } = parsedOrCliError(() =>
    parseArgs({
      args,
      allowPositionals: true,
      options: {
        email: { type: 'string' },
        'data-dir': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }),
  );
  if (printedHelp(values, USAGE)) return 0;
  const [sub, ...rest] = positionals;
  if (sub === undefined) throw new CliError(`no subcommand given\n${USAGE}`);
  if (sub !== 'create' && sub !== 'list' && sub !== 'revoke')
    throw new CliError(`unknown subcommand 'feed-tokens ${sub}' (expected create, list or revoke)`);
  const dataDir = values['data-dir'];

  if (sub === 'create') {
    if (rest.length > 0) throw new CliError(`unexpected argument '${rest[0]}' for feed-tokens create`);
    const { email } = values;
    if (email === undefined) throw new CliError('feed-tokens create needs --email');
    return withStore(dataDir, async (store) => {
      const account = await accountOf(store, email);
      const { token, prefix } = await store.createFeedToken(account.id);
      process.stderr.write(
        `created feed token ${prefix} for ${account.email} (plan ${account.plan}); it is shown once, below, and cannot be recovered\n`,
      );
      process.stdout.write(`${token}\n`);
      return 0;
    });
  }
  if (sub === 'list') {
    if (rest.length > 0) throw new CliError(`unexpected argument '${rest[0]}' for feed-tokens list`);
    return withStore(dataDir, async (store) => {
      const accountId = values.email === undefined ? undefined : (await accountOf(store, values.email)).id;
      const tokens = await store.listFeedTokens(accountId);
      const header = ['PREFIX', 'ACCOUNT', 'PLAN', 'CREATED', 'REVOKED'];
      const rows = tokens.map((t) => [t.prefix, t.accountId, t.plan, t.createdAt, t.revokedAt ?? '-']);
      printTable(header, rows, 'no feed tokens');
      return 0;
    });
  }
  if (values.email !== undefined) throw new CliError('--email is not an option of feed-tokens revoke');
  if (rest.length !== 1) throw new CliError('feed-tokens revoke needs exactly one PREFIX');
  const prefix = rest[0]!.trim().toLowerCase();
  if (!PREFIX_PATTERN.test(prefix))
    throw new CliError(
      `not a feed token prefix: '${rest[0]}' (8 characters a-z 0-9, as shown by 'ri feed-tokens list')`,
    );
  return withStore(dataDir, async (store) => {
    if (!(await store.revokeFeedToken(prefix)))
      throw new CliError(`no active feed token with prefix ${prefix}`, 1);
    process.stderr.write(`revoked feed token ${prefix}\n`);
    return 0;
  });
}

/** The account with that email, as `ri subscriptions` finds it (never made here: a token needs a plan). */
async function accountOf(store: StateStore, email: string): Promise<Account> {
  const account = await store.findAccountByEmail(email);
  if (!account) throw new CliError(`no account with email ${email.trim().toLowerCase()}`, 1);
  return account;
}
