import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { createPublicClient, createWalletClient, defineChain, http } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';

/**
 * A local EVM chain for development and tests (never production): anvil from the
 * @foundry-rs/anvil dev dependency, with chain id 84532 (Base Sepolia), and a USDC stand-in
 * (fixtures/x402/TestUSDC.json: EIP-3009 under USDC's EIP-712 name and version) placed at the
 * Base Sepolia USDC address, so the service's production configuration for base-sepolia runs
 * unchanged against it. For the tests (types in dev-chain.d.mts), the benchmarks and
 * `npm run demo:x402`; the service never runs it.
 */
export const BASE_SEPOLIA_USDC = '0x036CbD53842c5426634e7929541eC2318f3dCF7e';
const BASE_SEPOLIA_CHAIN_ID = 84532;

/** anvil's well-known development keys (its default mnemonic): public, for local chains only. */
export const DEV_KEYS = {
  facilitator: '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80',
  payer: '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d',
  payTo: '0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a',
};

/** The token's ABI and deployed bytecode (scripts/compile-test-usdc.mjs). */
const TOKEN = JSON.parse(readFileSync(join(import.meta.dirname, '../fixtures/x402/TestUSDC.json'), 'utf8'));

function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

function anvilBinary() {
  const require = createRequire(import.meta.url);
  const arch = process.arch === 'x64' ? 'amd64' : process.arch;
  const pkg = require.resolve(`@foundry-rs/anvil-${process.platform}-${arch}/package.json`);
  return join(dirname(pkg), 'bin', 'anvil');
}

/** Starts anvil on a free port with the token in place; stop() ends it. */
export async function startDevChain() {
  const port = await freePort();
  const child = spawn(
    anvilBinary(),
    ['--host', '127.0.0.1', '--port', String(port), '--chain-id', String(BASE_SEPOLIA_CHAIN_ID), '--silent'],
    { stdio: 'ignore' },
  );
  const rpcUrl = `http://127.0.0.1:${port}`;
  const chain = defineChain({
    id: BASE_SEPOLIA_CHAIN_ID,
    name: 'local Base Sepolia',
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  });
  const client = createPublicClient({ chain, transport: http(rpcUrl) });
  const deadline = Date.now() + 20_000;
  for (;;) {
    try {
      await client.getChainId();
      break;
    } catch (e) {
      if (Date.now() > deadline || child.exitCode !== null) {
        child.kill('SIGKILL');
        throw new Error(`anvil did not start: ${e.message}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  await client.request({
    method: 'anvil_setCode',
    params: [BASE_SEPOLIA_USDC, TOKEN.deployedBytecode],
  });
  const minter = createWalletClient({
    account: privateKeyToAccount(DEV_KEYS.facilitator),
    chain,
    transport: http(rpcUrl),
  });
  return {
    rpcUrl,
    client,
    async fund(address, atomic) {
      const hash = await minter.writeContract({
        address: BASE_SEPOLIA_USDC,
        abi: TOKEN.abi,
        functionName: 'mint',
        args: [address, atomic],
      });
      await client.waitForTransactionReceipt({ hash });
    },
    async balanceOf(address) {
      return client.readContract({
        address: BASE_SEPOLIA_USDC,
        abi: TOKEN.abi,
        functionName: 'balanceOf',
        args: [address],
      });
    },
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
