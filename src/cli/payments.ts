import { parseArgs } from 'node:util';
import type { PaymentStatus } from '../access/payment-ledger.js';
import { loadConfig } from '../config/config.js';
import { chainReaders, watchOf } from '../payments/from-config.js';
import {
  type ChainFamily,
  type ChainReaders,
  RECONCILE_DAYS,
  RECONCILE_EVERY_MS,
  RPC_VARIABLE,
  reconcilePayments,
  SETTLE_GRACE_MS,
  type Watch,
} from '../payments/reconcile.js';
import { CliError, parsedOrCliError, printedHelp } from './cli-error.js';
import { STATE_USAGE, withStore } from './keys.js';

const USAGE = `usage: ri payments list [--since DATE] [--status pending|settled|failed]
       ri payments reconcile [--days N]

list       the payments ledger, newest first: time, status, operation, amount (USDC), network,
           payer, transaction, resource. One tab-separated line each.
reconcile  the ledger against the chain, which decides what was paid. Every pending row, and
           every failed row of the last N days (default ${RECONCILE_DAYS}), is looked up: a payment used
           on chain (an EIP-3009 authorization; a Solana transaction, found by the payer's
           signature) becomes settled (with its transaction); a pending one not used once its
           validity and ${SETTLE_GRACE_MS / 1000} s more have passed (on Solana: its blockhash no longer
           valid) becomes failed; one still valid is left for a later run. Then the USDC
           transfers to X402_PAY_TO_EVM and X402_PAY_TO_SOLANA of those days are compared with
           the settled rows, both ways: a transfer that carried out a row's payment settles that
           row; what still disagrees is printed (a transfer with no settled row, a settled row
           with no transfer) and the exit status is 3. Read over X402_EVM_RPC_URL and
           X402_SOLANA_RPC_URL: a row whose chain has none is listed, left pending.
           \`ri serve\` runs the same at start and every ${RECONCILE_EVERY_MS / 60_000} min.

${STATE_USAGE}`;

const STATUSES = ['pending', 'settled', 'failed'] as const;

export async function run(args: string[]): Promise<number> {
  const { values, positionals } = parsedOrCliError(() => parse(args));
  if (printedHelp(values, USAGE)) return 0;
  const [sub, ...rest] = positionals;
  if (rest.length > 0) throw new CliError(`unexpected argument '${rest[0]}'\n${USAGE}`);
  if (sub === 'list') {
    const status = values.status;
    if (status !== undefined && !(STATUSES as readonly string[]).includes(status))
      throw new CliError(`--status must be one of ${STATUSES.join(', ')}`);
    const since = values.since;
    if (since !== undefined && Number.isNaN(Date.parse(since)))
      throw new CliError(`--since must be a date (2026-11-23 or an ISO 8601 time), not '${since}'`);
    return withStore(values['data-dir'], async (store) => {
      const rows = await store.listPayments({
        ...(since ? { since: new Date(since).toISOString() } : {}),
        ...(status ? { status: status as PaymentStatus } : {}),
      });
      for (const r of rows) {
        const usdc = (Number(r.amount) / 1e6).toFixed(6);
        process.stdout.write(
          `${[r.createdAt, r.status, r.operation, usdc, r.network, r.payer, r.transaction ?? r.error ?? '-', r.resource].join('\t')}\n`,
        );
      }
      process.stderr.write(`${rows.length} payment(s)\n`);
      return 0;
    });
  }
  if (sub === 'reconcile') {
    const config = loadConfig();
    const days = values.days === undefined ? RECONCILE_DAYS : Number(values.days);
    if (!Number.isInteger(days) || days < 1 || days > 365)
      throw new CliError(`--days must be a whole number of days, 1-365, not '${values.days}'`);
    const chains = chainReaders(config);
    const watch = await watchOf(config);
    return withStore(values['data-dir'], async (store) => {
      const report = await reconcilePayments(store, chains, { days, watch });
      for (const r of report.settled)
        process.stdout.write(`settled\t${r.id}\t${r.operation}\t${r.resource}\n`);
      for (const r of report.failed) process.stdout.write(`failed\t${r.id}\t${r.operation}\t${r.resource}\n`);
      for (const { row, why } of report.left) process.stdout.write(`pending\t${row.id}\t${why}\n`);
      const found = report.mismatches;
      for (const t of found?.transfersWithoutRow ?? [])
        process.stdout.write(
          `transfer-without-settled-row\t${t.transaction}\t${t.from}\t${t.value}\t${t.authorization ?? '-'}\n`,
        );
      for (const r of found?.settledWithoutTransfer ?? [])
        process.stdout.write(
          `settled-row-without-transfer\t${r.id}\t${r.transaction ?? '-'}\t${r.resource}\n`,
        );
      const compared = found
        ? `; compared with the chain over ${days} day(s): ${found.transfersWithoutRow.length} transfer(s) without a settled row, ${found.settledWithoutTransfer.length} settled row(s) without a transfer`
        : `; not compared with the chain (${notCompared(chains, watch)})`;
      process.stderr.write(
        `reconcile: ${report.settled.length} settled, ${report.failed.length} failed, ${report.left.length} left pending${compared}\n`,
      );
      return found && found.transfersWithoutRow.length + found.settledWithoutTransfer.length > 0 ? 3 : 0;
    });
  }
  throw new CliError(
    sub === undefined ? `no subcommand given\n${USAGE}` : `unknown subcommand 'payments ${sub}'`,
  );
}

/** Why no family's transfers were compared: for each, what is not set (its RPC endpoint, its payTo). */
function notCompared(chains: ChainReaders, watch: Watch): string {
  const payTo: Record<ChainFamily, string> = { evm: 'X402_PAY_TO_EVM', svm: 'X402_PAY_TO_SOLANA' };
  return (['evm', 'svm'] as const)
    .map((f) => {
      const missing = [...(chains[f] ? [] : [RPC_VARIABLE[f]]), ...(watch[f] ? [] : [payTo[f]])];
      return `${missing.join(' and ')} ${missing.length > 1 ? 'are' : 'is'} not set`;
    })
    .join('; ');
}

function parse(args: string[]) {
  return parseArgs({
    args,
    allowPositionals: true,
    options: {
      since: { type: 'string' },
      status: { type: 'string' },
      days: { type: 'string' },
      'data-dir': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
}
