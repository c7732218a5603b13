#!/usr/bin/env node
// npm run bench:x402: the cost of pay-per-call. On a local chain (anvil, chain id 84532, the
// USDC stand-in) with `ri facilitator` in its own process and `ri serve` in another:
//  1. requests/s of the unpaid 402 answer (no key: terms in PAYMENT-REQUIRED) against the same
//     route's keyed answer, autocannon, 50 connections, real client headers (Accept-Encoding);
//     budget: the 402 at least 50% of the keyed requests/s; each with the server's CPU per request;
//  2. the added latency of verify + settle: N paid calls one after another (each signed ahead by
//     the official x402 client), against the same route keyed, p50 and p99.
// Uses the 1M-works bench data when present (npm run bench:build), else the bundled sample.
import { spawn } from 'node:child_process';
import { join, resolve } from 'node:path';
import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { x402Client } from '@x402/fetch';
import autocannon from 'autocannon';
import { privateKeyToAccount } from 'viem/accounts';
import { DEV_KEYS, startDevChain } from '../scripts/dev-chain.mjs';
import { cpuTicks } from './cached-reads.mjs';
import { benchDataDir, startBenchServer } from './serve.mjs';

const root = resolve(import.meta.dirname, '..');
const duration = Number(process.env.BENCH_SECONDS ?? 10);
const paidCalls = Number(process.env.BENCH_PAID_CALLS ?? 100);
const dataDir = benchDataDir('x402');
const chain = await startDevChain();
const payer = privateKeyToAccount(DEV_KEYS.payer);
await chain.fund(payer.address, 1_000_000_000n);

const cli = join(root, 'dist/cli/main.js');
const facilitator = spawn(process.execPath, [cli, 'facilitator', '--port', '0'], {
  env: {
    ...process.env,
    X402_NETWORKS: 'base-sepolia',
    X402_EVM_RPC_URL: chain.rpcUrl,
    X402_FACILITATOR_PRIVATE_KEY: DEV_KEYS.facilitator,
  },
  stdio: ['ignore', 'pipe', 'inherit'],
});
const facilitatorUrl = await new Promise((ok) =>
  facilitator.stdout.on('data', (d) => {
    const m = /(http:\/\/127\.0\.0\.1:\d+)/.exec(String(d));
    if (m) ok(m[1]);
  }),
);
const server = await startBenchServer(dataDir, {
  plan: 'free',
  portBase: 19000,
  env: {
    X402_NETWORKS: 'base-sepolia',
    X402_PAY_TO_EVM: privateKeyToAccount(DEV_KEYS.payTo).address,
    X402_FACILITATOR_URL: facilitatorUrl,
    // As a deployment runs it: the chain read for every settlement not confirmed, and reconciled.
    X402_EVM_RPC_URL: chain.rpcUrl,
  },
});
const stopAll = async () => {
  await server.stop();
  facilitator.kill('SIGTERM');
  await chain.stop();
};
process.on('exit', () => facilitator.kill('SIGTERM'));

const path = '/v1/elements/Fe/history';
const url = server.base + path;
const clientHeaders = { 'accept-encoding': 'gzip, deflate, br', accept: 'application/json' };
const keyed = { ...clientHeaders, authorization: `Bearer ${server.key}` };

/** One autocannon run, with the server's CPU time over it (from /proc; null where there is none). */
async function run(options) {
  const before = cpuTicks(server.child.pid);
  const r = await new Promise((ok, fail) =>
    autocannon({ url, connections: 50, duration, ...options }, (err, res) => (err ? fail(err) : ok(res))),
  );
  const after = cpuTicks(server.child.pid);
  r.cpuUs = before === null ? null : ((after - before) * 10_000) / Math.max(1, r.requests.total);
  return r;
}
const row = (r) => ({
  rps: Math.round(r.requests.average),
  cpu_us_per_req: r.cpuUs === null ? null : Number(r.cpuUs.toFixed(1)),
  p50_ms: r.latency.p50,
  p99_ms: r.latency.p99,
  statuses: { '2xx': r['2xx'], non2xx: r.non2xx },
});

await run({ duration: 2, headers: keyed });
await run({ duration: 2, headers: clientHeaders });
const keyedRow = row(await run({ headers: keyed }));
const unpaidRow = row(await run({ headers: clientHeaders }));
const ratio = unpaidRow.rps / keyedRow.rps;
console.log(`${path} keyed (free plan):      ${JSON.stringify(keyedRow)}`);
console.log(`${path} unpaid 402 (no key):   ${JSON.stringify(unpaidRow)}`);
console.log(
  `402 / keyed requests/s: ${ratio.toFixed(2)} (budget >= 0.50: ${ratio >= 0.5 ? 'met' : 'MISSED'})`,
);

// Paid calls one after another: only the paid request is timed (the payment is signed ahead).
const client = new x402Client();
registerExactEvmScheme(client, { signer: payer });
const terms = decodePaymentRequiredHeader((await fetch(url)).headers.get('payment-required'));
const quantile = (xs, q) =>
  xs.slice().sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))];
const paid = [];
const plain = [];
const balanceBefore = await chain.balanceOf(payer.address);
for (let i = 0; i < paidCalls; i++) {
  const signature = encodePaymentSignatureHeader(await client.createPaymentPayload(terms));
  let t = performance.now();
  const res = await fetch(url, { headers: { ...clientHeaders, 'payment-signature': signature } });
  await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`paid call ${i}: ${res.status}`);
  paid.push(performance.now() - t);
  t = performance.now();
  await (await fetch(url, { headers: keyed })).arrayBuffer();
  plain.push(performance.now() - t);
}
const moved = balanceBefore - (await chain.balanceOf(payer.address));
const ms = (x) => Math.round(x * 10) / 10;
console.log(
  `${paidCalls} paid calls: p50 ${ms(quantile(paid, 0.5))} ms, p99 ${ms(quantile(paid, 0.99))} ms; ` +
    `keyed p50 ${ms(quantile(plain, 0.5))} ms, p99 ${ms(quantile(plain, 0.99))} ms; ` +
    `verify + settle added p50 ${ms(quantile(paid, 0.5) - quantile(plain, 0.5))} ms, p99 ${ms(quantile(paid, 0.99) - quantile(plain, 0.99))} ms`,
);
console.log(`payer balance moved by ${moved} atomic units (expected ${BigInt(paidCalls) * 50_000n})`);
await stopAll();
process.exit(moved === BigInt(paidCalls) * 50_000n ? 0 : 1);
