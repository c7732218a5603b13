import { parseArgs } from 'node:util';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { loadConfig } from '../config/config.js';
import { localFacilitator } from '../payments/local-facilitator.js';
import { CliError, portOption, printedHelp } from './cli-error.js';

const USAGE = `usage: ri facilitator [--port N] [--host H]

A local x402 facilitator over HTTP (GET /supported, POST /verify, POST /settle), for development
and tests: it verifies payments and settles them on the EVM chain at X402_EVM_RPC_URL (anvil, for
example), paying gas with the key in X402_FACILITATOR_PRIVATE_KEY. Point a service at it with
X402_FACILITATOR_URL=http://HOST:PORT. Settles the EVM networks of X402_NETWORKS.
Defaults: port 4020, host 127.0.0.1.`;

export async function run(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      port: { type: 'string', default: '4020' },
      host: { type: 'string', default: '127.0.0.1' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (printedHelp(values, USAGE)) return 0;
  portOption(values.port);
  const config = loadConfig();
  const key = config.X402_FACILITATOR_PRIVATE_KEY;
  if (!config.X402_EVM_RPC_URL) throw new CliError('X402_EVM_RPC_URL is not set (the chain to settle on)', 1);
  if (!key)
    throw new CliError('X402_FACILITATOR_PRIVATE_KEY is not set (the key that submits settlements)', 1);
  const facilitator = localFacilitator({
    rpcUrl: config.X402_EVM_RPC_URL,
    privateKey: key as `0x${string}`,
    networks: config.X402_NETWORKS,
  });
  const app = new Hono();
  app.get('/supported', async (c) => c.json(await facilitator.getSupported()));
  app.post('/verify', async (c) => {
    const body = await c.req.json();
    return c.json(await facilitator.verify(body.paymentPayload, body.paymentRequirements));
  });
  app.post('/settle', async (c) => {
    const body = await c.req.json();
    return c.json(await facilitator.settle(body.paymentPayload, body.paymentRequirements));
  });
  app.onError((e, c) => c.json({ error: e.message }, 500));
  const port = Number(values.port);
  await new Promise<void>((resolve) => {
    const server = serve({ fetch: app.fetch, port, hostname: values.host }, (info) => {
      process.stdout.write(
        `ri facilitator: http://${values.host}:${info.port} settling as ${facilitator.address}\n`,
      );
    });
    const stop = () => server.close(() => resolve());
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  });
  return 0;
}
