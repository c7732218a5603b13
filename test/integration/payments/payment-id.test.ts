import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import {
  decodePaymentRequiredHeader,
  decodePaymentResponseHeader,
  encodePaymentSignatureHeader,
} from '@x402/core/http';
import type { PaymentRequired } from '@x402/core/types';
import { appendPaymentIdentifierToExtensions, generatePaymentId } from '@x402/extensions/payment-identifier';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toolTerms } from '../../helpers/mcp.js';
import { expectLedgerMatchesChain, PAYER, paidService, payingFetch } from '../../helpers/x402.js';

// Idempotent retries of a paid call (x402 payment-identifier extension): the same payment with
// the same identifier for the same request is answered again and charged once; anything else
// that reuses a payment is refused as before.

let service: Awaited<ReturnType<typeof paidService>>;

beforeAll(async () => {
  service = await paidService();
}, 120_000);

afterAll(async () => {
  await service?.close();
});

const url = (path: string) => `${service.server.base}/v1${path}`;
const payerBalance = () => service.chain.balanceOf(PAYER.address);

/** The terms of a priced request, with the payment-identifier `id` filled in when given. */
async function termsFor(path: string, id?: string): Promise<PaymentRequired> {
  const res = await fetch(url(path));
  expect(res.status).toBe(402);
  const terms = decodePaymentRequiredHeader(res.headers.get('payment-required')!);
  if (id !== undefined) appendPaymentIdentifierToExtensions(terms.extensions!, id);
  return terms;
}

async function sign(terms: PaymentRequired): Promise<string> {
  return encodePaymentSignatureHeader(await payingFetch().client.createPaymentPayload(terms));
}

const pay = (path: string, signature: string) =>
  fetch(url(path), { headers: { 'payment-signature': signature } });
const codeOf = async (res: Response) => ((await res.json()) as { code: string }).code;

describe('REST: payment-identifier', () => {
  it('offers the extension in its terms, not required', async () => {
    const terms = await termsFor('/elements/Fe/history');
    expect(terms.extensions?.['payment-identifier']).toMatchObject({ info: { required: false } });
  });

  it('a retry of the same payment and identifier gets the same answer and the same receipt, charged once', async () => {
    const path = '/elements/Mn/history';
    const signature = await sign(await termsFor(path, generatePaymentId()));
    const before = await payerBalance();
    const first = await pay(path, signature);
    expect(first.status).toBe(200);
    const firstBody = await first.text();
    const firstReceipt = decodePaymentResponseHeader(first.headers.get('payment-response')!);
    expect(firstReceipt.success).toBe(true);

    const retry = await pay(path, signature);
    expect(retry.status).toBe(200);
    expect(await retry.text()).toBe(firstBody);
    const retryReceipt = decodePaymentResponseHeader(retry.headers.get('payment-response')!);
    expect(retryReceipt.transaction).toBe(firstReceipt.transaction);
    expect(before - (await payerBalance())).toBe(50_000n);
    const rows = (await service.ctx.state.listPayments()).filter(
      (r) => r.transaction === firstReceipt.transaction,
    );
    expect(rows).toHaveLength(1);
  });

  it('the same payment and identifier for another request is a replay, refused', async () => {
    const path = '/elements/Cr/history';
    const signature = await sign(await termsFor(path, generatePaymentId()));
    expect((await pay(path, signature)).status).toBe(200);
    const before = await payerBalance();
    const other = await pay('/elements/V/history', signature);
    expect(other.status).toBe(402);
    expect(await codeOf(other)).toBe('payment_replayed');
    expect(await payerBalance()).toBe(before);
  });

  it('without an identifier the same signed payment gets its answer again for the same request only', async () => {
    const path = '/elements/Ti/history';
    const signature = await sign(await termsFor(path));
    const before = await payerBalance();
    const first = await pay(path, signature);
    expect(first.status).toBe(200);
    const again = await pay(path, signature);
    expect(again.status).toBe(200);
    expect(await again.text()).toBe(await first.text());
    const other = await pay('/elements/Ti/history?resolution=yearly', signature);
    expect(other.status).toBe(402);
    expect(await codeOf(other)).toBe('payment_replayed');
    expect(before - (await payerBalance())).toBe(50_000n);
  });

  it('a new payment with an identifier already used is 409 payment_id_conflict, and not charged', async () => {
    const path = '/elements/Sc/history';
    const id = generatePaymentId();
    expect((await pay(path, await sign(await termsFor(path, id)))).status).toBe(200);
    const before = await payerBalance();
    const second = await pay(path, await sign(await termsFor(path, id)));
    expect(second.status).toBe(409);
    expect(await codeOf(second)).toBe('payment_id_conflict');
    expect(await payerBalance()).toBe(before);
  });

  it('a malformed identifier is payment_invalid before anything is charged', async () => {
    const path = '/elements/Zn/history';
    const terms = await termsFor(path);
    (terms.extensions!['payment-identifier'] as { info: { id?: string } }).info.id = 'short';
    const before = await payerBalance();
    const res = await pay(path, await sign(terms));
    expect(res.status).toBe(402);
    expect(await codeOf(res)).toBe('payment_invalid');
    expect(await payerBalance()).toBe(before);
  });
});

describe('MCP: payment-identifier', () => {
  async function connect(): Promise<Client> {
    const client = new Client({ name: 'ri-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${service.server.base}/mcp`)));
    await client.listTools(); // as hosts do: results are then checked against the output schemas
    return client;
  }
  const call = async (
    client: Client,
    name: string,
    args: Record<string, unknown>,
    meta?: Record<string, unknown>,
  ) => (await client.callTool({ name, arguments: args, ...(meta ? { _meta: meta } : {}) })) as CallToolResult;

  it('a retried tool call with the same payment and identifier is answered again, charged once; another call is refused', async () => {
    const mcp = await connect();
    const args = { symbol: 'Cu', limit: 20 };
    const unpaid = await call(mcp, 'get_element_papers', args);
    expect(unpaid.isError).toBe(true);
    const terms = toolTerms(unpaid);
    appendPaymentIdentifierToExtensions(terms.extensions!, generatePaymentId());
    const payload = await payingFetch().client.createPaymentPayload(terms);
    const before = await payerBalance();
    const first = await call(mcp, 'get_element_papers', args, { 'x402/payment': payload });
    expect(first.isError ?? false).toBe(false);
    const retry = await call(mcp, 'get_element_papers', args, { 'x402/payment': payload });
    expect(retry.isError ?? false).toBe(false);
    expect(retry.structuredContent).toEqual(first.structuredContent);
    const receipt = (r: CallToolResult) =>
      (r._meta!['x402/payment-response'] as { transaction: string }).transaction;
    expect(receipt(retry)).toBe(receipt(first));
    expect(before - (await payerBalance())).toBe(20_000n);
    // The same payment for other arguments (another answer) is a replay.
    const other = await call(
      mcp,
      'get_element_papers',
      { symbol: 'Ag', limit: 20 },
      { 'x402/payment': payload },
    );
    expect(other.isError).toBe(true);
    expect(toolTerms(other).error).toMatch(/already/);
    expect(before - (await payerBalance())).toBe(20_000n);
    await mcp.close();
  });
});

describe('after every payment of this file', () => {
  // The other apps of this file share the chain but never settle: every transfer is this ledger's.
  it('the chain and the ledger agree: every transfer is a settled row, every settled row a transfer', async () => {
    await expectLedgerMatchesChain(service.chain, [service.ctx.state]);
  });
});
