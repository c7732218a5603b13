import { describe, expect, it } from 'vitest';
import { usdText } from '../../../src/access/policy.js';
import { bearer, sampleApp } from '../../helpers/app.js';

describe('usdText: money as prices are written', () => {
  it('writes two decimals, more only where the amount has them', () => {
    expect(usdText(0.1)).toBe('0.10 USD');
    expect(usdText(0.05)).toBe('0.05 USD');
    expect(usdText(2)).toBe('2.00 USD');
    expect(usdText(0.005)).toBe('0.005 USD');
  });

  it('is how a refusal states a per-call price', async () => {
    const ctx = await sampleApp({ X402_NETWORKS: ['base-sepolia'], X402_PAY_TO_EVM: `0x${'1'.repeat(40)}` });
    try {
      const res = await ctx.app.request('/v1/subjects/topic/T10030/history', bearer(ctx.keys.free));
      expect(res.status).toBe(403);
      expect(((await res.json()) as { detail: string }).detail).toMatch(
        /paid per call without a key \(x402\): 0\.10 USD\./,
      );
    } finally {
      await ctx.close();
    }
  });
});
