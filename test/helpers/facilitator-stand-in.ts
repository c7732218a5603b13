import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { FacilitatorClient } from '@x402/core/server';

/** How the stand-in answers POST /settle. */
export type SettleMode =
  | { kind: 'ok' }
  /** Settles on chain at once, answers after `ms` (a facilitator slow to confirm). */
  | { kind: 'slow'; ms: number }
  /** Waits `ms`, then settles and answers (the transfer itself lands late). */
  | { kind: 'slow-before'; ms: number }
  /** Settles on chain, then never answers (the connection stays open). */
  | { kind: 'hang' }
  /** Settles on chain, then answers 200 with success false (a facilitator that settles and then refuses). */
  | { kind: 'fail-after' }
  /** Settles through an RPC connection that loses the reply to eth_sendRawTransaction: the transaction is mined, the facilitator says it failed. */
  | { kind: 'lost-rpc' }
  /** Settles on chain, then drops the connection without an answer. */
  | { kind: 'drop' }
  /** Settles on chain, then answers 502 (a proxy in front of it failing). */
  | { kind: 'error-after' }
  /** Answers 500 without settling. */
  | { kind: 'error-before' }
  /** Refuses: 400 with success false, nothing settled. */
  | { kind: 'refuse' };

/**
 * A facilitator over real HTTP in front of a real one (the local facilitator settling on the dev
 * chain), misbehaving on /settle as `mode` says: the service meets it through the x402 reference
 * HTTP client, as it would a hosted facilitator.
 */
export async function facilitatorStandIn(real: FacilitatorClient, lossy?: FacilitatorClient) {
  const state: { mode: SettleMode; settles: number } = { mode: { kind: 'ok' }, settles: 0 };
  const body = async (req: IncomingMessage) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  };
  const json = (res: ServerResponse, status: number, value: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(value));
  };
  const server = createServer(async (req, res) => {
    try {
      if (req.method === 'GET' && req.url === '/supported') return json(res, 200, await real.getSupported());
      const { paymentPayload, paymentRequirements } = await body(req);
      if (req.url === '/verify')
        return json(res, 200, await real.verify(paymentPayload, paymentRequirements));
      if (req.url !== '/settle') return json(res, 404, { error: 'not found' });
      state.settles++;
      const mode = state.mode;
      if (mode.kind === 'error-before') return json(res, 500, { error: 'internal error' });
      if (mode.kind === 'refuse')
        return json(res, 400, {
          success: false,
          errorReason: 'invalid_exact_evm_payload_signature',
          transaction: '',
          network: paymentRequirements.network,
        });
      if (mode.kind === 'lost-rpc') {
        if (!lossy) throw new Error('lost-rpc needs a facilitator on a lossy RPC connection');
        return json(res, 200, await lossy.settle(paymentPayload, paymentRequirements));
      }
      if (mode.kind === 'slow-before') await new Promise((r) => setTimeout(r, mode.ms));
      const result = await real.settle(paymentPayload, paymentRequirements);
      if (mode.kind === 'slow') await new Promise((r) => setTimeout(r, mode.ms));
      if (mode.kind === 'hang') return; // settled; the answer never comes
      if (mode.kind === 'fail-after')
        return json(res, 200, {
          success: false,
          errorReason: 'invalid_exact_evm_transaction_failed',
          transaction: '',
          network: paymentRequirements.network,
        });
      if (mode.kind === 'drop') return req.socket.destroy();
      if (mode.kind === 'error-after') {
        res.writeHead(502, { 'content-type': 'text/html' });
        return res.end('<html>502 Bad Gateway</html>');
      }
      return json(res, 200, result);
    } catch (e) {
      json(res, 500, { error: (e as Error).message });
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    state,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/**
 * A JSON-RPC proxy in front of the chain that forwards every call but loses the reply to
 * eth_sendRawTransaction (the connection is cut once the node has taken the transaction): the
 * transaction is broadcast and mined, and its sender never hears so.
 */
export async function lossyRpc(target: string) {
  let lost = 0;
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const upstream = await fetch(target, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    const text = await upstream.text();
    if (body.includes('eth_sendRawTransaction')) {
      lost++;
      return req.socket.destroy();
    }
    res.writeHead(upstream.status, { 'content-type': 'application/json' });
    res.end(text);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    lost: () => lost,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
