import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/** scripts/demo-x402.mjs runs on dist (npm test builds it first via pretest; not rebuilt here). */
const DEMO = resolve(import.meta.dirname, '../../../scripts/demo-x402.mjs');

function runDemo(): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [DEMO], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    child.once('error', fail);
    child.once('close', (code) => done({ code, stdout, stderr }));
  });
}

describe('npm run demo:x402', () => {
  it('pays one call of each price on a local chain and the balances move by exactly the prices', async () => {
    const { code, stdout, stderr } = await runDemo();
    expect(code, `${stdout}\n${stderr}`).toBe(0);

    const receipts = [...stdout.matchAll(/^\s*(\d+\.\d{2})\s+(\d{3})\s+(0x[0-9a-f]{64})\s+(\/v1\/\S+)$/gm)];
    expect(receipts.map((m) => [m[1], m[2], m[4]!.replace(/quote_id=[^&]+/, 'quote_id=Q')])).toEqual([
      ['0.01', '200', '/v1/subjects/search?q=iron'],
      ['0.02', '200', '/v1/elements/Fe/papers?limit=20'],
      ['0.05', '200', '/v1/elements/Fe/history'],
      ['0.10', '200', '/v1/elements/Fe/papers?limit=100'],
      ['0.05', '200', '/v1/research?q=oxygen%20evolution%20nickel&page_size=3'],
      ['0.01', '200', '/v1/lab/quote?q=Ni%20Fe'],
      ['0.04', '200', '/v1/lab/run?quote_id=Q&depth=papers_20'],
      ['0.19', '200', '/v1/lab/run?quote_id=Q&depth=papers_100'],
    ]);
    // Every call settled in its own transaction.
    expect(new Set(receipts.map((m) => m[3])).size).toBe(receipts.length);
    expect(stdout).toMatch(/sum of prices:\s+0\.470000 USDC \(470000 atomic\)/);
    expect(stdout).toMatch(/payer balance:\s+10\.000000 -> 9\.530000 USDC \(change -0\.470000\)/);
    expect(stdout).toMatch(/payTo balance:\s+0\.000000 -> 0\.470000 USDC \(change 0\.470000\)/);
    expect(stdout).toMatch(/demo:x402 OK/);
  }, 120_000);
});
