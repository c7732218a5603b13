#!/usr/bin/env node
// npm run demo:x402: pay-per-call (x402) end to end on a local chain, never on a real network.
// Starts anvil (@foundry-rs/anvil) on 127.0.0.1 with chain id 84532 (Base Sepolia), places an
// EIP-3009 token under USDC's EIP-712 name and version at the Base Sepolia USDC address, funds a
// payer, starts `ri facilitator` and `ri serve` (on the bundled sample, in a temporary data dir)
// configured for base-sepolia, pays one call of each price with the official @x402/fetch client,
// prints each receipt (transaction hash) and the balance changes, and exits 0 only if every call
// answered 200 and the payer's and payTo's balances moved by exactly the sum of the prices.
// Needs a build (npm run demo:x402 builds first); everything it starts is stopped on exit.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { decodePaymentResponseHeader, wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { privateKeyToAccount } from 'viem/accounts';
import { BASE_SEPOLIA_USDC, DEV_KEYS, startDevChain } from './dev-chain.mjs';

const root = resolve(import.meta.dirname, '..');
const MAIN = join(root, 'dist/cli/main.js');
// Prices from the one price table (src/access/policy.ts), as '0.05' strings.
const { priceOf, operation, LAB_DEPTHS, LAB_QUOTE_USD } = await import(join(root, 'dist/access/policy.js'));
const usd = (v) => (Math.round(v * 1e6) / 1e6).toFixed(2);

const OVERALL_TIMEOUT_MS = 90_000;
const START_TIMEOUT_MS = 60_000;
const FUND_ATOMIC = 10_000_000n; // 10 USDC
const USDC_DECIMALS = 6;

/** '0.05' (USD) -> 50000n (USDC atomic units), by string and integer arithmetic only. */
function usdToAtomic(usd) {
  const m = /^(\d+)(?:\.(\d+))?$/.exec(usd);
  if (!m || (m[2] ?? '').length > USDC_DECIMALS) throw new Error(`bad price ${usd}`);
  return BigInt(m[1]) * 10n ** BigInt(USDC_DECIMALS) + BigInt((m[2] ?? '').padEnd(USDC_DECIMALS, '0'));
}

/** 50000n -> '0.050000' */
function formatAtomic(atomic) {
  const neg = atomic < 0n;
  const abs = neg ? -atomic : atomic;
  const unit = 10n ** BigInt(USDC_DECIMALS);
  return `${neg ? '-' : ''}${abs / unit}.${String(abs % unit).padStart(USDC_DECIMALS, '0')}`;
}

// Everything started, for cleanup (on success, failure, timeout or a signal).
const children = [];
let chain;
let tmp;

function killChildren(signal = 'SIGTERM') {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill(signal);
}

function stopChild(child) {
  return new Promise((done) => {
    if (child.exitCode !== null || child.signalCode !== null) return done();
    const force = setTimeout(() => child.kill('SIGKILL'), 5_000);
    child.once('exit', () => {
      clearTimeout(force);
      done();
    });
    child.kill('SIGTERM');
  });
}

function removeTmp() {
  if (tmp) rmSync(tmp, { recursive: true, force: true });
  tmp = undefined;
}

async function cleanup() {
  await Promise.all(children.map(stopChild));
  if (chain) {
    const c = chain;
    chain = undefined;
    await Promise.race([c.stop(), new Promise((r) => setTimeout(r, 5_000))]);
  }
  removeTmp();
}

/** Last resort: no awaiting, just signals (anvil's stop() sends SIGTERM synchronously). */
function abort(message) {
  console.error(`demo:x402 FAILED: ${message}`);
  killChildren('SIGKILL');
  chain?.stop();
  try {
    removeTmp();
  } catch {}
  process.exit(1);
}

const hardTimeout = setTimeout(
  () => abort(`did not finish within ${OVERALL_TIMEOUT_MS / 1000} s`),
  OVERALL_TIMEOUT_MS,
);
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => abort(`interrupted (${sig})`));

/** Starts `ri <args>`; resolves with the match once its stdout matches `ready`. */
function startRi(name, args, env, ready) {
  const child = spawn(process.execPath, [MAIN, ...args], {
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (d) => {
    stderr += d;
  });
  const started = new Promise((resolveMatch, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${name} not ready after ${START_TIMEOUT_MS / 1000} s: ${stderr}`)),
      START_TIMEOUT_MS,
    );
    child.stdout.on('data', (d) => {
      stdout += d;
      const m = stdout.match(ready);
      if (m) {
        clearTimeout(timer);
        resolveMatch(m);
      }
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited (${code ?? signal}) before it was ready:\n${stdout}${stderr}`));
    });
  });
  return { child, started, stderr: () => stderr };
}

async function main() {
  const payer = privateKeyToAccount(DEV_KEYS.payer);
  const payTo = privateKeyToAccount(DEV_KEYS.payTo).address;
  tmp = mkdtempSync(join(tmpdir(), 'ri-demo-x402-'));
  const dataDir = join(tmp, 'data');

  chain = await startDevChain();
  await chain.fund(payer.address, FUND_ATOMIC);
  console.log(`anvil: ${chain.rpcUrl} (chain id 84532), test USDC at ${BASE_SEPOLIA_USDC}`);
  console.log(`payer ${payer.address} funded with ${formatAtomic(FUND_ATOMIC)} USDC; payTo ${payTo}`);

  const fac = startRi(
    'ri facilitator',
    ['facilitator', '--port', '0'],
    {
      X402_NETWORKS: 'base-sepolia',
      X402_EVM_RPC_URL: chain.rpcUrl,
      X402_FACILITATOR_PRIVATE_KEY: DEV_KEYS.facilitator,
    },
    /(http:\/\/127\.0\.0\.1:\d+)/,
  );
  const facilitatorUrl = (await fac.started)[1];
  console.log(`facilitator: ${facilitatorUrl}`);

  console.log('starting ri serve (builds the bundled sample on first start)...');
  const server = startRi(
    'ri serve',
    ['serve', '--port', '0', '--host', '127.0.0.1', '--data-dir', dataDir],
    {
      X402_NETWORKS: 'base-sepolia',
      X402_PAY_TO_EVM: payTo,
      X402_FACILITATOR_URL: facilitatorUrl,
      STATE_URL: `sqlite:${join(tmp, 'state.sqlite')}`,
    },
    /at (http:\/\/\S+)\/v1/,
  );
  const base = (await server.started)[1];
  console.log(`service: ${base}/v1`);

  const client = new x402Client();
  registerExactEvmScheme(client, { signer: payer });
  const pay = wrapFetchWithPayment(fetch, client);

  const payerBefore = await chain.balanceOf(payer.address);
  const payToBefore = await chain.balanceOf(payTo);
  const failures = [];
  let expected = 0n;
  let quoteId;

  const calls = [
    { usd: usd(priceOf(operation('searchSubjects'))), path: '/v1/subjects/search?q=iron' },
    { usd: usd(priceOf(operation('getElementPapers'), 20)), path: '/v1/elements/Fe/papers?limit=20' },
    { usd: usd(priceOf(operation('getElementHistory'))), path: '/v1/elements/Fe/history' },
    { usd: usd(priceOf(operation('getElementPapers'), 100)), path: '/v1/elements/Fe/papers?limit=100' },
    {
      usd: usd(priceOf(operation('research'))),
      path: '/v1/research?q=oxygen%20evolution%20nickel&page_size=3',
    },
    { usd: usd(LAB_QUOTE_USD), path: '/v1/lab/quote?q=Ni%20Fe', quote: true },
    {
      usd: usd(LAB_DEPTHS.papers_20.usd - LAB_QUOTE_USD),
      path: () => `/v1/lab/run?quote_id=${encodeURIComponent(quoteId)}&depth=papers_20`,
    },
    {
      usd: usd(LAB_DEPTHS.papers_100.usd - LAB_QUOTE_USD),
      path: () => `/v1/lab/run?quote_id=${encodeURIComponent(quoteId)}&depth=papers_100`,
    },
  ];

  console.log(`\n${'price USD'.padStart(9)}  status  ${'transaction'.padEnd(66)}  path`);
  for (const call of calls) {
    const path = typeof call.path === 'function' ? call.path() : call.path;
    const price = usdToAtomic(call.usd);
    expected += price;
    const before = await chain.balanceOf(payer.address);
    const res = await pay(`${base}${path}`);
    const body = await res.text();
    const header = res.headers.get('payment-response');
    const receipt = header ? decodePaymentResponseHeader(header) : undefined;
    const paid = before - (await chain.balanceOf(payer.address));
    const tx = receipt?.transaction || '(no receipt)';
    console.log(`${call.usd.padStart(9)}  ${String(res.status).padEnd(6)}  ${tx.padEnd(66)}  ${path}`);
    if (res.status !== 200) failures.push(`${path}: status ${res.status}: ${body.slice(0, 300)}`);
    else if (!receipt?.success) failures.push(`${path}: no successful PAYMENT-RESPONSE`);
    else if (paid !== price)
      failures.push(`${path}: payer paid ${formatAtomic(paid)} USDC, price is ${formatAtomic(price)}`);
    if (call.quote && res.status === 200) quoteId = JSON.parse(body).quote_id;
    if (call.quote && !quoteId) {
      failures.push(`${path}: no quote_id, cannot run the lab`);
      break;
    }
  }

  const payerAfter = await chain.balanceOf(payer.address);
  const payToAfter = await chain.balanceOf(payTo);
  const payerChange = payerAfter - payerBefore;
  const payToChange = payToAfter - payToBefore;
  console.log(`\nsum of prices:  ${formatAtomic(expected)} USDC (${expected} atomic)`);
  console.log(
    `payer balance:  ${formatAtomic(payerBefore)} -> ${formatAtomic(payerAfter)} USDC (change ${formatAtomic(payerChange)})`,
  );
  console.log(
    `payTo balance:  ${formatAtomic(payToBefore)} -> ${formatAtomic(payToAfter)} USDC (change ${formatAtomic(payToChange)})`,
  );
  if (-payerChange !== expected)
    failures.push(`payer decreased by ${formatAtomic(-payerChange)}, expected ${formatAtomic(expected)}`);
  if (payToChange !== expected)
    failures.push(`payTo increased by ${formatAtomic(payToChange)}, expected ${formatAtomic(expected)}`);
  return failures;
}

let code = 1;
try {
  const failures = await main();
  if (failures.length === 0) {
    console.log('\ndemo:x402 OK: every call paid, balances moved by exactly the prices');
    code = 0;
  } else {
    console.error(`\ndemo:x402 FAILED:\n  ${failures.join('\n  ')}`);
  }
} catch (e) {
  console.error(`\ndemo:x402 FAILED: ${e?.stack ?? e}`);
} finally {
  await cleanup();
  clearTimeout(hardTimeout);
}
process.exit(code);
