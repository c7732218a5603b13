// What bench/http.mjs and bench/http-ab.mjs share: the bare route started on the bytes a service
// answers, one autocannon run against a process with its CPU time per request, and rounds that
// measure the bare route and each service back to back, alternating the services' order.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';

export const BROWSER = { 'accept-encoding': 'gzip, deflate, br' };
export const PATHS = ['/v1/elements/Fe', '/v1/elements'];

/** The raw bytes and Content-Encoding of an answer, not decoded (fetch would decode them). */
function rawGet(url, headers) {
  return new Promise((ok, fail) =>
    request(url, { headers }, (res) => {
      const chunks = [];
      res.on('data', (d) => chunks.push(d));
      res.on('end', () =>
        ok({ body: Buffer.concat(chunks), encoding: res.headers['content-encoding'] ?? 'identity' }),
      );
    })
      .on('error', fail)
      .end(),
  );
}

/**
 * The bare route (bare-route.mjs) in its own process, serving the bytes `service` answers for
 * PATHS; `wrap`: a command to run it under (e.g. valgrind and its options); `workUs`: busy work
 * per answer; `port`: default the service's + 1000.
 */
export async function startBare(service, { wrap = [], workUs = 0, port: fixedPort } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'ri-bench-bare-'));
  for (const [i, path] of PATHS.entries()) {
    const identity = await rawGet(service + path, {});
    const br = await rawGet(service + path, BROWSER);
    if (identity.encoding !== 'identity' || br.encoding !== 'br')
      throw new Error(`${path}: expected identity and br, got ${identity.encoding} and ${br.encoding}`);
    writeFileSync(join(dir, `${i}.identity`), identity.body);
    writeFileSync(join(dir, `${i}.br`), br.body);
  }
  const port = fixedPort ?? Number(new URL(service).port) + 1000;
  const command = [...wrap, process.execPath, join(import.meta.dirname, 'bare-route.mjs')];
  const child = spawn(command[0], command.slice(1), {
    env: {
      ...process.env,
      BARE_DIR: dir,
      BARE_PORT: String(port),
      BARE_PATHS: PATHS.join(','),
      BARE_WORK_US: String(workUs),
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  process.on('exit', () => child.kill('SIGTERM'));
  await new Promise((ok) => child.stdout.on('data', (d) => String(d).includes('serving') && ok()));
  const exited = new Promise((ok) => child.once('exit', ok));
  // Resolves once the process has ended (a wrapper such as valgrind writes its files as it ends).
  const stop = () => {
    child.kill('SIGTERM');
    return exited;
  };
  return { base: `http://127.0.0.1:${port}`, pid: child.pid, key: null, stop };
}

/** CPU clock ticks (user + system, 10 ms each on Linux) of a process so far, from /proc. */
export function cpuTicks(pid) {
  const statPath = `/proc/${pid}/stat`;
  if (!existsSync(statPath)) return null;
  const fields = readFileSync(statPath, 'utf8').split(') ')[1].split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

export function load(url, options) {
  return new Promise((ok, fail) =>
    autocannon({ url, connections: 50, ...options }, (err, r) => (err ? fail(err) : ok(r))),
  );
}

/**
 * One run of `row` (path, headers, keyed) against a target ({ base, pid, key }): requests/s,
 * p50/p99 and the target's CPU microseconds per answered request.
 */
export async function measure(target, row, seconds) {
  const headers = {
    ...row.headers,
    ...(row.keyed && target.key ? { authorization: `Bearer ${target.key}` } : {}),
  };
  const before = cpuTicks(target.pid);
  const generator = process.cpuUsage();
  const r = await load(target.base + row.path, { duration: seconds, headers });
  const generatorUs = process.cpuUsage(generator);
  const after = cpuTicks(target.pid);
  if (r.non2xx || r.errors)
    throw new Error(`${target.base}${row.path}: ${r.non2xx} non-2xx, ${r.errors} errors`);
  return {
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    cpuUs: before === null ? null : ((after - before) * 10_000) / Math.max(1, r.requests.total),
    // The load generator's own CPU (this process): near a core, it bounds requests/s, not the server.
    generatorUs: (generatorUs.user + generatorUs.system) / Math.max(1, r.requests.total),
    generatorShare: (generatorUs.user + generatorUs.system) / (seconds * 1e6),
  };
}

/**
 * `rounds` rounds of one run per target, back to back: the bare route first, then the others in
 * turn (their order reversed every other round), so that each ratio compares processes measured
 * within seconds of each other: this machine's speed swings by half within a minute. Returns, per
 * target name, its runs, and per other target, in each round, its requests/s over the bare
 * route's (`ratios`) and the bare route's CPU per request over its own (`cpuRatios`, the budget's
 * measure: requests/s is bounded by the load generator, which shares the machine).
 */
export async function rounds(targets, row, { rounds: count, seconds }) {
  const names = Object.keys(targets).filter((n) => n !== 'bare');
  const runs = Object.fromEntries(Object.keys(targets).map((n) => [n, []]));
  const ratios = Object.fromEntries(names.map((n) => [n, []]));
  const cpuRatios = Object.fromEntries(names.map((n) => [n, []]));
  for (let i = 0; i < count; i++) {
    const order = i % 2 ? [...names].reverse() : names;
    const bare = await measure(targets.bare, row, seconds);
    runs.bare.push(bare);
    for (const name of order) {
      const run = await measure(targets[name], row, seconds);
      runs[name].push(run);
      ratios[name].push(run.rps / bare.rps);
      if (run.cpuUs !== null && bare.cpuUs !== null) cpuRatios[name].push(bare.cpuUs / run.cpuUs);
    }
  }
  return { runs, ratios, cpuRatios };
}

export function median(xs) {
  const s = xs.filter((x) => x !== null).sort((x, y) => x - y);
  if (!s.length) return null;
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}
