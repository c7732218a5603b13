#!/usr/bin/env node
// Compiles fixtures/x402/TestUSDC.sol (the local chain's stand-in for USDC) with solc (npm,
// wasm) into TestUSDC.json beside it: the ABI and the deployed bytecode. The tests and
// `npm run demo:x402` read the committed JSON, so they never compile. Run after editing the .sol.
import { readFileSync, writeFileSync } from 'node:fs';
import solc from 'solc';

const dir = new URL('../fixtures/x402/', import.meta.url);
const source = readFileSync(new URL('TestUSDC.sol', dir), 'utf8');
const input = {
  language: 'Solidity',
  sources: { 'TestUSDC.sol': { content: source } },
  settings: {
    optimizer: { enabled: true, runs: 200 },
    evmVersion: 'cancun',
    outputSelection: { '*': { '*': ['abi', 'evm.deployedBytecode.object'] } },
  },
};
const output = JSON.parse(solc.compile(JSON.stringify(input)));
const errors = (output.errors ?? []).filter((e) => e.severity === 'error');
if (errors.length) {
  for (const e of errors) console.error(e.formattedMessage);
  process.exit(1);
}
const c = output.contracts['TestUSDC.sol'].TestUSDC;
writeFileSync(
  new URL('TestUSDC.json', dir),
  `${JSON.stringify({ compiler: solc.version(), abi: c.abi, deployedBytecode: `0x${c.evm.deployedBytecode.object}` }, null, 2)}\n`,
);
console.log(`TestUSDC.json written (solc ${solc.version()})`);
