#!/usr/bin/env node
// The bare baseline of the cached-read benchmarks, in a process of its own: a @hono/node-server
// route per path answering the bytes the service sent (identity, or Brotli when Accept-Encoding
// asks for it), with plain header objects, the fastest Hono answer.
//   BARE_DIR=dir (i.identity and i.br for the i-th of BARE_PATHS, comma-separated) BARE_PORT=port
//   BARE_WORK_US: microseconds of busy work before each answer (default 0), for http-calibrate.mjs
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';

const dir = process.env.BARE_DIR;
const workMs = Number(process.env.BARE_WORK_US ?? 0) / 1000;
/** Busy work on the event loop, as a server's own code would do. */
const work = () => {
  for (const start = performance.now(); performance.now() - start < workMs; );
};
const bare = new Hono();
for (const [i, path] of process.env.BARE_PATHS.split(',').entries()) {
  const identity = readFileSync(join(dir, `${i}.identity`));
  const br = readFileSync(join(dir, `${i}.br`));
  const type = { 'content-type': 'application/json' };
  const encoded = { ...type, 'content-encoding': 'br', vary: 'Accept-Encoding' };
  bare.get(path, (c) => {
    if (workMs > 0) work();
    return c.req.header('accept-encoding')?.includes('br')
      ? c.body(br, 200, encoded)
      : c.body(identity, 200, type);
  });
}
serve({ fetch: bare.fetch, port: Number(process.env.BARE_PORT), hostname: '127.0.0.1' }, () =>
  console.log('serving'),
);
