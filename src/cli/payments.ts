import { parseArgs } from 'node:util';
import type { PaymentStatus } from '../access/payment-ledger.js';
import { loadConfig } from '../config/config.js';
import { evmAuthorizationReader, reconcilePayments, SETTLE_GRACE_MS } from '../payments/reconcile.js';
import { CliError, parsedOrCliError, printedHelp } from './cli-error.js';
import { STATE_USAGE, withStore } from './keys.js';

const USAGE = `usage: ri payments list [--since DATE] [--status pending|settled|failed]
       ri payments reconcile

list       the payments ledger, newest first: time, status, operation, amount (USDC), network,
           payer, transaction, resource. One tab-separated line each.
reconcile  resolves rows left pending by a crash between settlement and the ledger write, and
           failed rows whose error was a timeout or a lost connection: a payment whose
           authorization was used on chain becomes settled (with its transaction); a pending one
           not used once its validity and ${SETTLE_GRACE_MS / 1000} s more have passed becomes failed; one still
           valid is left for a later run. EVM networks only, read over X402_EVM_RPC_URL; Solana
           rows are listed for a check with the facilitator.

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
    const rpc = loadConfig().X402_EVM_RPC_URL;
    return withStore(values['data-dir'], async (store) => {
      const report = await reconcilePayments(store, rpc ? evmAuthorizationReader(rpc) : null);
      for (const r of report.settled)
        process.stdout.write(`settled\t${r.id}\t${r.operation}\t${r.resource}\n`);
      for (const r of report.failed) process.stdout.write(`failed\t${r.id}\t${r.operation}\t${r.resource}\n`);
      for (const { row, why } of report.left) process.stdout.write(`pending\t${row.id}\t${why}\n`);
      process.stderr.write(
        `reconcile: ${report.settled.length} settled, ${report.failed.length} failed, ${report.left.length} left pending\n`,
      );
      return 0;
    });
  }
  throw new CliError(
    sub === undefined ? `no subcommand given\n${USAGE}` : `unknown subcommand 'payments ${sub}'`,
  );
}

function parse(args: string[]) {
  return parseArgs({
    args,
    allowPositionals: true,
    options: {
      since: { type: 'string' },
      status: { type: 'string' },
      'data-dir': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
}
