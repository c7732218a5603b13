import { describe, expect, it } from 'vitest';
import { quoteId } from '../../../src/lab/quote-signature.js';

describe('quoteId', () => {
  const secret = 'a-secret-of-sixteen+';
  it('is the same for the same query, data and secret, and names the query and data', () => {
    const id = quoteId('Fe Ni', '0123456789abcdef', secret);
    expect(id).toMatch(/^q_[A-Za-z0-9_-]{24}$/);
    expect(quoteId('Fe Ni', '0123456789abcdef', secret)).toBe(id);
    expect(quoteId('Fe Co', '0123456789abcdef', secret)).not.toBe(id);
    expect(quoteId('Fe Ni', '0123456789abcdee', secret)).not.toBe(id);
  });

  it('cannot be computed without the service secret: another secret names another quote', () => {
    expect(quoteId('Fe Ni', '0123456789abcdef', `${secret}x`)).not.toBe(
      quoteId('Fe Ni', '0123456789abcdef', secret),
    );
  });
});
