#!/usr/bin/env node
// npm run soak (issue 13, point 7 and its budget): two `ri serve` replicas on one PostgreSQL and
// one Redis behind nginx running deploy/nginx.conf, on a DATA_DIR they share.
//   1. Hostile: SOAK_HOSTILE (100,000) requests generated from the OpenAPI document with a seeded
//      generator (valid and invalid parameter values, hostile strings, random bytes in paths,
//      queries and bodies, odd and oversized headers, oversized URLs, keys valid and invalid, a
//      different Host header almost every time), half through nginx, half straight to a replica.
//   2. Mixed load for SOAK_SECONDS (60): keyed GETs through nginx (80% element and list reads,
//      15% subject reads, 5% research and lab quotes) with `Accept-Encoding: gzip, deflate, br`,
//      while every 10 s a partition of new works (made by `ri generate` beforehand) is moved into
//      the folder `ri update --watch` follows (a new snapshot each time), and one replica is killed
//      with SIGKILL and started again.
//   3. Payments and a snapshot repair (issue 30): both replicas restarted taking x402 payments on
//      a local chain (anvil, scripts/dev-chain.mjs) through a facilitator stand-in that, on
//      the first settle of each payment in turn, answers late (past X402_SETTLE_TIMEOUT_SECONDS,
//      2 s here), drops the connection after settling, answers 502 after settling or 500 before,
//      answers "failed" after settling, loses its RPC node's reply after broadcasting, never
//      answers, or refuses (the payer then signs a new payment; the refused one must move nothing).
//      Under keyed load through nginx (research and lab included), SOAK_PAID (40) paid calls,
//      SOAK_PAID_CONCURRENCY (4) at a time, half through nginx, half straight to a replica: each
//      signed by the official x402 client from its 402's terms and sent again with the same
//      PAYMENT-SIGNATURE while the answer is 503 settlement_pending (or, while the snapshot is
//      damaged, 503 data_unavailable) until 200. SOAK_DAMAGE_AT (10) s in, the served snapshot
//      file is damaged in place; once both replicas have set it aside, `ri build` rewrites it and
//      both must serve it again, no restart. Checked: every paid call answered 200 with a receipt,
//      no 200 without its settled ledger row, the payer charged exactly the prices, the transfers
//      on chain are the settled rows; no keyed GET answered other than 200 or (while damaged) 503
//      data_unavailable / worker_unavailable with Retry-After.
// Reports failed GETs, 5xx, p99 per route and each replica's RSS (VmRSS, sampled every second; the
// replicas of phases 1 and 2), then one verdict per budget item; exits 1 when an item fails.
// SOAK_SEED changes the generator; SOAK_KEEP=1 keeps the work folder and its logs after a soak
// that passed.
// Needs nginx (apt-get install nginx-light), PostgreSQL (SOAK_POSTGRES_URL, default
// postgres://postgres@127.0.0.1:5432/test), Redis (SOAK_REDIS_URL, default redis://127.0.0.1:6379)
// and anvil (the @foundry-rs/anvil dev dependency).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  closeSync,
  cpSync,
  createWriteStream,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { Agent, createServer as createHttpServer, request } from 'node:http';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import {
  decodePaymentRequiredHeader,
  decodePaymentResponseHeader,
  encodePaymentSignatureHeader,
} from '@x402/core/http';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { x402Client } from '@x402/fetch';
import pg from 'pg';
import { parseAbiItem } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { HOSTILE_STRINGS } from './hostile-strings.mjs';
import { findNginx, startNginx } from './nginx.mjs';

const ROOT = resolve(import.meta.dirname, '..');
let MAIN = join(ROOT, 'dist/cli/main.js');
const SECONDS = Number(process.env.SOAK_SECONDS ?? 60);
const HOSTILE = Number(process.env.SOAK_HOSTILE ?? 100_000);
const SEED = Number(process.env.SOAK_SEED ?? 20261123);
const PUBLISH_EVERY_S = 10;
const HOSTILE_CONCURRENCY = 16;
const LOAD_CONCURRENCY = 16;
const PG_URL = process.env.SOAK_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const REDIS_URL = process.env.SOAK_REDIS_URL ?? 'redis://127.0.0.1:6379';
const BUDGET = { rssGrowth: 0.1, rssPeakMb: 300 };
const PAID = Number(process.env.SOAK_PAID ?? 40);
const PAID_CONCURRENCY = Number(process.env.SOAK_PAID_CONCURRENCY ?? 4);
const PAID_LOAD_CONCURRENCY = 8;
const PAID_SETTLE_TIMEOUT_S = 2;
/** When, after the paid calls begin, the served snapshot is damaged. */
const PAID_DAMAGE_AT_S = Number(process.env.SOAK_DAMAGE_AT ?? 10);
/** How long the keyed load goes on once the paid calls and the repair are done. */
const PAID_AFTER_S = 5;

const nginxBin = findNginx();
if (!nginxBin) {
  console.error('soak: nginx is not installed (apt-get install nginx-light)');
  process.exit(2);
}

const work = mkdtempSync(join(tmpdir(), 'ri-soak-'));
// nginx's workers (www-data when the soak runs as root) must reach their temp folders inside it.
chmodSync(work, 0o755);
const dataDir = join(work, 'data');
const logs = join(work, 'logs');
mkdirSync(logs, { recursive: true });
const schema = `ri_soak_${randomBytes(4).toString('hex')}`;
const started = Date.now();
const say = (line) => console.error(`[${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s] ${line}`);

// ---------------------------------------------------------------------------------------------
// Processes

/** `ri ARGS` to its end, without blocking the event loop (the load keeps flowing meanwhile). */
function ri(args, env = {}) {
  return new Promise((done) => {
    const child = spawn(process.execPath, [MAIN, ...args], {
      env: { ...process.env, ...baseEnv, LOG_LEVEL: 'warn', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    child.on('exit', (status) => done({ status, stdout, stderr }));
  });
}

async function riOk(args, env) {
  const r = await ri(args, env);
  if (r.status !== 0) throw new Error(`ri ${args.join(' ')} exited ${r.status}: ${r.stderr.slice(-2000)}`);
  return r.stdout;
}

/**
 * A copy of dist/ for this soak, next to links to everything else in the package: the tree is
 * shared, and a rebuild during the soak must not change the code the restarted replica runs.
 */
function privateBuild() {
  const app = join(work, 'app');
  mkdirSync(app);
  cpSync(join(ROOT, 'dist'), join(app, 'dist'), { recursive: true });
  for (const name of readdirSync(ROOT))
    if (name !== 'dist' && name !== '.git') symlinkSync(join(ROOT, name), join(app, name));
  return join(app, 'dist/cli/main.js');
}

function freePort() {
  return new Promise((ok) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => ok(port));
    });
  });
}

/** RSS of a process in bytes (VmRSS from /proc), or null once it is gone. */
function rssOf(pid) {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : null;
  } catch {
    return null;
  }
}

let baseEnv = {};
const replicas = [];
/**
 * How deploy/nginx.conf says to launch a replica: a 4 MB young generation, a 512 MB old generation
 * (V8 then lets the heap grow less past its live objects before collecting) and two malloc arenas
 * hold a replica about 80 MB lower under hostile load (docs/operations.md). SOAK_DEFAULT_MEMORY=1
 * launches with Node's defaults instead.
 */
const REPLICA_MEMORY_ENV = process.env.SOAK_DEFAULT_MEMORY
  ? {}
  : {
      NODE_OPTIONS: [process.env.NODE_OPTIONS, '--max-semi-space-size=4 --max-old-space-size=512']
        .filter(Boolean)
        .join(' '),
      MALLOC_ARENA_MAX: '2',
    };

/** A `ri serve` on `port`, its log (stdout and stderr) appended to logs/replica-N.log; resolves once it serves. */
function startReplica(index, port) {
  const log = createWriteStream(join(logs, `replica-${index}.log`), { flags: 'a' });
  const child = spawn(process.execPath, [MAIN, 'serve', '--port', String(port), '--host', '127.0.0.1'], {
    env: { ...process.env, ...baseEnv, ...REPLICA_MEMORY_ENV },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout.pipe(log, { end: false });
  child.stderr.pipe(log, { end: false });
  const replica = {
    index,
    port,
    child,
    base: `http://127.0.0.1:${port}`,
    log: join(logs, `replica-${index}.log`),
  };
  replicas[index] = replica;
  return new Promise((ok, fail) => {
    let out = '';
    const onData = (d) => {
      out += d;
      // Listening: the 'ri: serving ... at http://' line (not the earlier 'serving snapshot' log).
      if (/ri: serving .* at http:\/\//.test(out)) {
        child.stdout.off('data', onData);
        ok(replica);
      }
    };
    child.stdout.on('data', onData);
    child.once('exit', (code, signal) =>
      fail(new Error(`replica ${index} exited ${code ?? signal} before serving`)),
    );
  });
}

/** SIGTERM; SIGKILL when still running 20 s later (a replica drains within 10 s). Resolves whether it exited by itself. */
function stopProcess(child) {
  return new Promise((ok) => {
    if (child.exitCode !== null || child.signalCode !== null) return ok(true);
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      ok(false);
    }, 20_000);
    child.once('exit', () => {
      clearTimeout(timer);
      ok(true);
    });
    child.kill('SIGTERM');
  });
}

// ---------------------------------------------------------------------------------------------
// A seeded generator (mulberry32)

let rngState = SEED >>> 0;
function random() {
  rngState = (rngState + 0x6d2b79f5) >>> 0;
  let t = rngState;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const int = (min, max) => min + Math.floor(random() * (max - min + 1));
const pick = (list) => list[Math.floor(random() * list.length)];
const chance = (p) => random() < p;
const bytes = (max) => Buffer.from(Array.from({ length: int(0, max) }, () => int(0, 255)));
/** Picks by weight: [[weight, value], ...]. */
function weighted(pairs) {
  let r = random() * pairs.reduce((s, [w]) => s + w, 0);
  for (const [w, v] of pairs) {
    r -= w;
    if (r < 0) return v;
  }
  return pairs.at(-1)[1];
}

function hostileString() {
  return weighted([
    [3, () => pick(HOSTILE_STRINGS)],
    [1, () => bytes(40).toString('latin1')],
    [1, () => String.fromCodePoint(...Array.from({ length: int(0, 20) }, () => int(1, 0x10ffff) & ~0x800))],
  ])();
}

/** Percent-encodes UTF-8, or leaves the bytes raw now and then. */
function encode(value, raw = false) {
  const b = Buffer.from(value, 'utf8');
  if (raw) return b.toString('latin1');
  return [...b]
    .map((c) =>
      /[A-Za-z0-9\-_.~]/.test(String.fromCharCode(c))
        ? String.fromCharCode(c)
        : `%${c.toString(16).toUpperCase().padStart(2, '0')}`,
    )
    .join('');
}

const pools = {
  symbol: ['Fe', 'fe', 'O', 'Ni', 'Uuo', 'Og', 'H', 'Cu', 'Zz'],
  topic: ['T10030'],
  keyword: ['catalysis'],
  q: ['oxygen evolution', 'nickel iron', 'perovskite', 'catalysis'],
  lab: ['Ni Fe', 'perovskite -Pb year:2020..', '(Ni OR Co) Fe', 'cataly* year:2019', '"oxygen evolution" Fe'],
  paper: ['10.1038/nature12373', 'Oxygen evolution on nickel iron oxides', 'constructor'],
  /** The lab queries this data quotes (the load asks only these). */
  labQuoted: [],
  quoteIds: [],
  quotes: [],
  keys: {},
};

function validValue(p) {
  const s = p.schema ?? {};
  if (Array.isArray(s.enum)) return String(pick(s.enum));
  if (s.type === 'integer') return String(int(Number(s.minimum ?? 0), Number(s.maximum ?? 1000)));
  switch (p.name) {
    case 'symbol':
      return pick(pools.symbol);
    case 'subject_id':
      return pick([...pools.topic, ...pools.keyword]);
    case 'quote_id':
      return pick([...pools.quoteIds, 'q_unknown']);
    case 'keyword':
      return pick(pools.keyword);
    case 'lenses':
      return ['foundational', 'now', 'newest'].filter(() => chance(0.5)).join(',') || 'now';
    case 'paper':
      return pick(pools.paper);
    default:
      return p.name === 'q' && s.maxLength === 2000 ? pick(pools.lab) : pick(pools.q);
  }
}

function invalidValue(p) {
  const s = p.schema ?? {};
  const options = [''];
  if (Array.isArray(s.enum)) options.push(`x${bytes(8).toString('hex')}`);
  if (s.type === 'integer') {
    const min = Number(s.minimum ?? 0);
    const max = Number(s.maximum ?? 1000);
    options.push(
      String(min - 1),
      String(max + 1),
      '1.5',
      'abc',
      '0x10',
      '1e3',
      ' 7',
      '99999999999999999999999',
    );
  }
  if (typeof s.maxLength === 'number') options.push('x'.repeat(s.maxLength + 1));
  return pick(options);
}

function keyHeader() {
  return weighted([
    [6, [['authorization', `Bearer ${pools.keys.professional}`]]],
    [4, []],
    [
      2,
      [
        [
          'authorization',
          pick([
            `Bearer ${pools.keys.free}`,
            'Bearer ri_bogus_key',
            `Bearer ri_${randomBytes(6).toString('hex')}_${randomBytes(16).toString('hex')}`,
            'Bearer ',
            'Basic dXNlcjpwYXNz',
            `bearer ${pools.keys.professional}`,
            `Bearer ${pools.keys.professional} extra`,
          ]),
        ],
      ],
    ],
    [1, [['authorization', hostileString()]]],
  ]);
}

/** A Host header: a new name almost every time (the response cache must not grow with them), sometimes a strange one. */
function hostHeader() {
  return weighted([
    [12, () => `${randomBytes(6).toString('hex')}.example.org`],
    [2, () => `${int(1, 254)}.${int(0, 255)}.${int(0, 255)}.${int(1, 254)}:${int(1, 65535)}`],
    [1, () => 'localhost'],
    [1, () => `${'h'.repeat(int(200, 4000))}.example`],
    [1, () => hostileString()],
  ])();
}

const ODD_HEADERS = [
  ['accept-encoding', 'gzip, deflate, br'],
  ['accept-encoding', 'br;q=0, *;q=0'],
  ['accept', 'text/html'],
  ['accept', '*/*;q=0.1, application/xml'],
  ['x-forwarded-for', '1.2.3.4, 5.6.7.8'],
  ['x-forwarded-for', 'not an address'],
  ['x-forwarded-proto', 'gopher'],
  ['payment-signature', 'not-base64!!'],
  ['payment-signature', Buffer.from('{"x402Version":2,"payload":{}}').toString('base64')],
  ['x-request-id', 'a'.repeat(300)],
  ['origin', 'https://evil.example'],
  ['if-none-match', '"*"'],
  ['if-modified-since', 'yesterday'],
  ['range', 'bytes=0-10'],
  ['expect', '100-continue'],
  ['cookie', `ri_session=${'x'.repeat(100)}`],
  ['content-type', 'application/json; charset=utf-7'],
  ['transfer-encoding', 'gzip'],
];

function oddHeaders() {
  const out = ODD_HEADERS.filter(() => chance(0.08));
  if (chance(0.02)) out.push(['x-big', 'b'.repeat(pick([9_000, 20_000, 40_000]))]);
  if (chance(0.01)) for (let i = 0; i < 150; i++) out.push([`x-many-${i}`, String(i)]);
  if (chance(0.02))
    out.push([
      bytes(10)
        .toString('latin1')
        .replace(/[\r\n:]/g, '') || 'x',
      hostileString(),
    ]);
  return out;
}

function jsonValue(depth = 0) {
  return weighted([
    [2, () => int(-1e6, 1e6)],
    [2, () => hostileString()],
    [1, () => null],
    [1, () => chance(0.5)],
    [depth < 3 ? 1 : 0, () => Array.from({ length: int(0, 4) }, () => jsonValue(depth + 1))],
    [
      depth < 3 ? 1 : 0,
      () =>
        Object.fromEntries(
          Array.from({ length: int(0, 4) }, () => [
            pick(['query', 'quote', 'quote_id', 'depth', 'markdown', hostileString()]),
            jsonValue(depth + 1),
          ]),
        ),
    ],
  ])();
}

function validBody(op) {
  if (op.template === '/lab/quote')
    return chance(0.5)
      ? { query: pick(pools.lab) }
      : { markdown: `Notes\n\n\`\`\`query\n${pick(pools.lab)}\n\`\`\`\n` };
  const depth = pick(['papers_20', 'papers_100']);
  if (pools.quotes.length === 0 || chance(0.3))
    return { quote_id: pick([...pools.quoteIds, 'q_unknown']), depth };
  const quote = pick(pools.quotes);
  // A quote with one field changed: its signature no longer matches.
  return chance(0.3) ? { quote: { ...quote, run_price: { usd: -0.01 } }, depth } : { quote, depth };
}

function body(op) {
  return weighted([
    [6, () => ({ body: Buffer.from(JSON.stringify(validBody(op))), type: 'application/json' })],
    [2, () => ({ body: Buffer.from(JSON.stringify(jsonValue()) ?? 'null'), type: 'application/json' })],
    [
      1,
      () => ({
        body: bytes(300),
        type: pick(['application/json', null, 'text/plain', 'multipart/form-data; boundary=x']),
      }),
    ],
    [1, () => ({ body: Buffer.alloc(0), type: 'application/json' })],
    [
      1,
      () => ({
        body: Buffer.from(`{"quote":${'['.repeat(20_000)}${']'.repeat(20_000)},"depth":"papers_20"}`),
        type: 'application/json',
      }),
    ],
    [0.2, () => ({ body: Buffer.alloc(200_000, 0x20), type: 'application/json' })],
  ])();
}

/** A request for an operation of the document: mostly valid parts, the rest every kind of wrong. */
function operationRequest(op) {
  const mixed = chance(0.6);
  let path = `/v1${op.template}`;
  const query = [];
  for (const p of op.parameters) {
    let values;
    if (!mixed) values = p.required || p.in === 'path' || chance(0.75) ? [validValue(p)] : null;
    else
      values = weighted([
        [8, () => [validValue(p)]],
        [2, () => [invalidValue(p)]],
        [2, () => [hostileString()]],
        [1, () => null],
        [1, () => [validValue(p), validValue(p)]],
      ])();
    if (p.in === 'path')
      path = path.replace(`{${p.name}}`, values ? encode(values[0], mixed && chance(0.05)) : '');
    else if (p.in === 'query' && values) for (const v of values) query.push(`${encode(p.name)}=${encode(v)}`);
  }
  if (mixed && chance(0.12))
    query.push(`${encode(pick(['foo', 'limit', 'Q', 'q[]', '__proto__']))}=${encode(hostileString())}`);
  if (chance(0.005)) query.push(`pad=${'p'.repeat(pick([9_000, 70_000]))}`);
  const headers = [
    ...(mixed ? keyHeader() : [['authorization', `Bearer ${pools.keys.professional}`]]),
    ...(mixed ? oddHeaders() : []),
  ];
  if (!mixed && chance(0.5)) headers.push(['accept-encoding', 'gzip, deflate, br']);
  const b =
    op.method === 'POST'
      ? mixed
        ? body(op)
        : { body: Buffer.from(JSON.stringify(validBody(op))), type: 'application/json' }
      : null;
  if (b?.type) headers.push(['content-type', b.type]);
  return {
    label: `${op.method} ${op.template}`,
    method: op.method === 'GET' && chance(0.05) ? 'HEAD' : op.method,
    target: query.length ? `${path}?${query.join('&')}` : path,
    headers,
    body: b?.body ?? null,
  };
}

/** Random bytes where a path, a query string or a body goes; any method. */
function randomRequest() {
  const prefix = pick([
    '/v1/',
    '/v1/elements/',
    '/v1/subjects/topic/',
    '/v1/lab/',
    '/',
    '/mcp',
    '/docs/',
    '/metrics',
    '/readyz',
  ]);
  const path = chance(0.5) ? bytes(60).toString('latin1') : encode(hostileString());
  const query = chance(0.5) ? `?${bytes(80).toString('latin1')}` : '';
  return {
    label: '(random)',
    method: pick(['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD', 'TRACE', 'FOO', 'CONNECT']),
    target: `${prefix}${path}${query}`,
    headers: [...keyHeader(), ...oddHeaders()],
    body: chance(0.5) ? bytes(500) : null,
  };
}

// ---------------------------------------------------------------------------------------------
// Raw HTTP for the hostile requests: one connection each, the bytes exactly as generated

function sendRaw(port, req, id) {
  return new Promise((ok) => {
    const socket = connect(port, '127.0.0.1');
    const chunks = [];
    let settled = false;
    const finish = (error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      const raw = Buffer.concat(chunks);
      // Interim answers (100 Continue) come first: the status is that of the last status line.
      const statusLines = [
        ...raw
          .subarray(0, 64 * 1024)
          .toString('latin1')
          .matchAll(/(?:^|\r\n\r\n)HTTP\/1\.[01] (\d{3})/g),
      ];
      const finalStatus = statusLines.length ? Number(statusLines.at(-1)[1]) : 0;
      ok({ status: finalStatus, raw, error: finalStatus ? null : (error ?? 'no answer') });
    };
    const timer = setTimeout(() => {
      socket.destroy();
      finish('no answer in 40 s');
    }, 40_000);
    socket.on('data', (c) => chunks.push(c));
    // The server may close after answering a request it refused before reading its body.
    socket.on('error', (e) => chunks.length === 0 && finish(e.code ?? e.message));
    socket.on('close', () => finish());
    const hostLines = [['host', hostHeader()]];
    if (chance(0.01)) hostLines.push(['host', hostHeader()]);
    const headerLines = [...hostLines, ...req.headers];
    if (!req.headers.some(([k]) => k === 'x-request-id')) headerLines.push(['x-request-id', id]);
    const lines = [
      `${req.method} ${req.target} HTTP/1.1`,
      ...headerLines.map(([k, v]) => `${k}: ${String(v).replace(/[\r\n]/g, ' ')}`),
      'connection: close',
      ...(req.body ? [`content-length: ${req.body.length}`] : []),
    ];
    socket.write(Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'));
    if (req.body) socket.write(req.body);
  });
}

// ---------------------------------------------------------------------------------------------
// RSS sampling

const rssSamples = []; // { t, phase, index, pid, rss }
let phase = 'start';
const sampler = setInterval(() => {
  const t = (Date.now() - started) / 1000;
  for (const r of replicas) {
    if (!r || r.child.exitCode !== null || r.child.signalCode !== null) continue;
    const rss = rssOf(r.child.pid);
    if (rss !== null) rssSamples.push({ t, phase, index: r.index, pid: r.child.pid, rss });
  }
}, 1000);

const mb = (b) => (b / 1024 / 1024).toFixed(0);

// ---------------------------------------------------------------------------------------------

let nginx;
/** Stops everything; false when a replica did not exit on SIGTERM (a shutdown that hangs is a finding too). */
async function cleanup() {
  clearInterval(sampler);
  const live = replicas.filter((r) => r && r.child.exitCode === null && r.child.signalCode === null);
  const exited = await Promise.all(live.map((r) => stopProcess(r.child)));
  for (const [i, r] of live.entries())
    if (!exited[i])
      console.log(
        `FAILED replica ${r.index} (pid ${r.child.pid}) did not exit within 20 s of SIGTERM (killed)`,
      );
  await nginx?.stop();
  if (publishing.child) await stopProcess(publishing.child);
  await paidInfra.standIn?.close();
  await paidInfra.lossy?.close();
  await paidInfra.chain?.stop();
  const db = new pg.Client({ connectionString: PG_URL });
  await db
    .connect()
    .then(() => db.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`))
    .catch((e) => say(`could not drop schema ${schema}: ${e.message}`))
    .finally(() => db.end().catch(() => undefined));
  return exited.every(Boolean);
}

async function main() {
  if (!existsSync(MAIN)) throw new Error('dist/ is missing: npm run build');
  MAIN = privateBuild();
  const [portA, portB, portN] = [await freePort(), await freePort(), await freePort()];
  baseEnv = {
    DATA_DIR: dataDir,
    STATE_URL: `${PG_URL}?schema=${schema}`,
    REDIS_URL,
    TRUST_PROXY: '1',
    PUBLIC_URL: `http://127.0.0.1:${portN}`,
    // The soak measures answers and memory, not budgets: limits no load here reaches.
    RATE_LIMIT_PER_KEY: '1000000000',
    RATE_LIMIT_PER_IP: '1000000000',
    MAX_CONNECTIONS_PER_CLIENT: '4096',
    LOG_LEVEL: 'warn',
  };

  say(`work folder ${work}; PostgreSQL schema ${schema}`);
  say('first snapshot: the bundled sample');
  await riOk([
    'ingest',
    join(ROOT, 'fixtures/openalex/works-geoscience.jsonl.gz'),
    join(ROOT, 'fixtures/openalex/works-chemistry.jsonl.gz'),
  ]);
  const firstVersion = (await riOk(['build'])).trim();
  for (const plan of ['professional', 'free'])
    pools.keys[plan] = (await riOk(['keys', 'create', '--plan', plan, '--email', `soak-${plan}@example.org`]))
      .trim()
      .split('\n')
      .at(-1);

  await Promise.all([startReplica(0, portA), startReplica(1, portB)]);
  const nginxDir = join(work, 'nginx');
  mkdirSync(nginxDir);
  nginx = await startNginx(nginxBin, { listen: portN, upstreams: [portA, portB], dir: nginxDir });
  say(`replicas on ${portA} and ${portB}, nginx on ${portN}, data_version ${firstVersion}`);

  // The operations, and valid values from the data itself.
  const doc = await (await fetch(`${replicas[0].base}/v1/openapi.json`)).json();
  const operations = Object.entries(doc.paths).flatMap(([template, item]) =>
    Object.entries(item).map(([method, op]) => ({
      method: method.toUpperCase(),
      template,
      parameters: op.parameters ?? [],
    })),
  );
  const auth = { authorization: `Bearer ${pools.keys.professional}` };
  const found = await (
    await fetch(`${replicas[0].base}/v1/subjects/search?q=oxygen`, { headers: auth })
  ).json();
  for (const r of found.results ?? []) pools[r.subject_type]?.push(r.subject_id);
  for (const q of pools.lab) {
    const res = await fetch(`${replicas[0].base}/v1/lab/quote?q=${encodeURIComponent(q)}`, { headers: auth });
    const quote = await res.json();
    if (res.status === 200 && quote.quote_id) {
      pools.labQuoted.push(q);
      pools.quoteIds.push(quote.quote_id);
      pools.quotes.push(quote);
    }
  }

  const hostile = await hostilePhase(operations, portN, [portA, portB]);
  await preparePublishing();
  const load = await loadPhase(portN, portB);
  const paid = await paidRepairPhase(portN, [portA, portB]);
  return report(hostile, load, paid);
}

async function hostilePhase(operations, portN, direct) {
  phase = 'hostile';
  say(
    `hostile: ${HOSTILE.toLocaleString('en')} requests over ${operations.length} operations, ${HOSTILE_CONCURRENCY} at a time`,
  );
  const result = {
    sent: 0,
    byStatus: { nginx: new Map(), replica: new Map() },
    ms: [],
    fiveXx: [],
    noAnswer: [],
    byVia: { nginx: 0, replica: 0 },
  };
  let next = 0;
  const begunAt = Date.now();
  const worker = async () => {
    while (next < HOSTILE) {
      const n = next++;
      const req = chance(1 / 13) ? randomRequest() : operationRequest(pick(operations));
      // Even: through nginx; odd: straight to a replica, in turn.
      const viaNginx = n % 2 === 0;
      const port = viaNginx ? portN : direct[(n >> 1) % 2];
      const id = `soak-h${n}`;
      const begun = performance.now();
      const a = await sendRaw(port, req, id);
      result.ms.push(performance.now() - begun);
      result.sent++;
      result.byVia[viaNginx ? 'nginx' : 'replica']++;
      const statuses = result.byStatus[viaNginx ? 'nginx' : 'replica'];
      statuses.set(a.status, (statuses.get(a.status) ?? 0) + 1);
      const what = {
        n,
        via: viaNginx ? 'nginx' : `replica ${port}`,
        id,
        label: req.label,
        request: `${req.method} ${req.target.slice(0, 200)}`,
        headers: [
          ...req.headers.map(([k, v]) => `${k}: ${String(v).slice(0, 60)}`),
          ...(req.body ? [`(a body of ${req.body.length} bytes)`] : []),
        ].join(' | '),
      };
      if (a.status >= 500)
        result.fiveXx.push({
          ...what,
          viaNginx,
          status: a.status,
          answer: a.raw.toString('latin1').slice(0, 600),
        });
      else if (a.status === 0) result.noAnswer.push({ ...what, error: a.error });
      if ((n + 1) % 10_000 === 0)
        say(`hostile: ${n + 1} sent, ${result.fiveXx.length} 5xx, ${result.noAnswer.length} unanswered`);
    }
  };
  await Promise.all(Array.from({ length: HOSTILE_CONCURRENCY }, worker));
  result.seconds = (Date.now() - begunAt) / 1000;
  // Let the replicas settle (garbage collection) before the peak is read.
  await new Promise((r) => setTimeout(r, 2000));
  return result;
}

/** The partitions to publish (made before the load) and `ri update --watch` on a folder holding the first. */
const publishing = {
  staged: [],
  watched: join(work, 'watched'),
  child: null,
  onCycle: () => undefined,
  onVersion: () => undefined,
};
async function preparePublishing() {
  const count = Math.ceil(SECONDS / PUBLISH_EVERY_S) + 1;
  say(`publishing: generating ${count} partitions of 200 new works each`);
  mkdirSync(publishing.watched);
  for (let i = 0; i < count; i++) {
    const out = join(work, `staged-${i}`);
    await riOk(['generate', '--works', '200', '--seed', String(SEED + i), '--out', out, '--workers', '1']);
    publishing.staged.push(out);
  }
  renameSync(publishing.staged[0], join(publishing.watched, 'publish-0'));
  const child = spawn(process.execPath, [MAIN, 'update', publishing.watched, '--watch', '--interval', '1'], {
    env: { ...process.env, ...baseEnv },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  publishing.child = child;
  const log = createWriteStream(join(logs, 'update.log'), { flags: 'a' });
  child.stderr.pipe(log);
  child.stderr.on('data', (d) => String(d).includes('new file(s)') && publishing.onCycle());
  let first = true;
  await new Promise((ok, fail) => {
    let buffered = '';
    child.stdout.on('data', (d) => {
      buffered += d;
      const lines = buffered.split('\n');
      buffered = lines.pop();
      for (const line of lines.filter(Boolean)) {
        if (first) {
          first = false;
          say(`publishing: ri update --watch published ${line} (partition 0)`);
          ok();
        } else publishing.onVersion(line.trim());
      }
    });
    child.once('exit', (code) => first && fail(new Error(`ri update --watch exited ${code}`)));
  });
}

/** The route a load request belongs to, for the per-route table. */
const LOAD_ROUTES = [
  [0.3, '/v1/elements', () => '/v1/elements'],
  [
    0.3,
    '/v1/elements/{symbol}',
    () => `/v1/elements/${pick(['Fe', 'Ni', 'O', 'Cu', 'Co', 'Li', 'Pt', 'H'])}`,
  ],
  [0.2, '/v1/elements/{symbol}/history', () => `/v1/elements/${pick(['Fe', 'Ni', 'O', 'Cu'])}/history`],
  [
    0.1,
    '/v1/subjects/{type}/{id}',
    () =>
      `/v1/subjects/${pick(['topic/T10030', ...pools.keyword.map((k) => `keyword/${encodeURIComponent(k)}`)])}`,
  ],
  [0.05, '/v1/subjects/search', () => `/v1/subjects/search?q=${encodeURIComponent(pick(pools.q))}`],
  [0.03, '/v1/research', () => `/v1/research?q=${encodeURIComponent(pick(pools.q))}`],
  [0.02, '/v1/lab/quote', () => `/v1/lab/quote?q=${encodeURIComponent(pick(pools.labQuoted))}`],
];

async function loadPhase(portN, portB) {
  phase = 'load';
  const t0 = Date.now();
  const at = () => (Date.now() - t0) / 1000;
  say(
    `load: ${SECONDS} s of keyed GETs through nginx, ${LOAD_CONCURRENCY} at a time; a publish every ${PUBLISH_EVERY_S} s; replica 1 killed at ${Math.round(SECONDS / 3)} s`,
  );
  // From a loopback address of this run's own: nginx passes it on, so the budget in the shared Redis is this run's.
  const localAddress = `127.${int(1, 254)}.${int(0, 255)}.${int(1, 254)}`;
  const agent = new Agent({ keepAlive: true, maxSockets: LOAD_CONCURRENCY, localAddress });
  const headers = {
    authorization: `Bearer ${pools.keys.professional}`,
    'accept-encoding': 'gzip, deflate, br',
  };
  const routes = new Map(
    LOAD_ROUTES.map(([, name]) => [name, { n: 0, ms: [], failed: 0, fiveXx: 0, limited: 0 }]),
  );
  const failures = [];
  const events = [];
  let running = true;

  const get = (path, id) =>
    new Promise((ok) => {
      const begun = performance.now();
      const req = request(
        `http://127.0.0.1:${portN}${path}`,
        { headers: { ...headers, 'x-request-id': id }, agent, timeout: 30_000 },
        (res) => {
          const chunks = [];
          res.on('data', (c) => chunks.push(c));
          res.on('end', () =>
            ok({
              status: res.statusCode,
              ms: performance.now() - begun,
              body: Buffer.concat(chunks),
              encoding: res.headers['content-encoding'],
            }),
          );
          res.on('error', (e) => ok({ status: 0, ms: performance.now() - begun, error: e.message }));
        },
      );
      req.on('timeout', () => req.destroy(new Error('timeout after 30 s')));
      req.on('error', (e) => ok({ status: 0, ms: performance.now() - begun, error: e.message }));
      req.end();
    });

  let count = 0;
  const worker = async () => {
    while (running) {
      const [, name, make] = weighted(LOAD_ROUTES.map((r) => [r[0], r]));
      const path = make();
      const id = `soak-l${count++}`;
      const a = await get(path, id);
      const row = routes.get(name);
      row.n++;
      row.ms.push(a.ms);
      if (a.status === 429) row.limited++;
      else if (a.status < 200 || a.status > 299) {
        row.failed++;
        if (a.status >= 500) row.fiveXx++;
        failures.push({
          t: at().toFixed(1),
          route: name,
          path,
          id,
          status: a.status,
          error: a.error,
          body: a.body?.subarray(0, 300).toString('latin1'),
        });
      }
    }
  };

  // Publishes: every 10 s a new partition (new works) is moved into the folder `ri update --watch`
  // follows; it ingests it and publishes a snapshot, which the replicas switch to by themselves.
  const versions = [];
  const drops = [];
  // `update: N new file(s)` on its stderr starts a cycle with the partitions there; its data_version on stdout ends it.
  publishing.onCycle = () => {
    for (const d of drops) d.taken = true;
  };
  publishing.onVersion = (version) => {
    versions.push(version);
    const taken = drops.filter((d) => d.taken && !d.done);
    for (const d of taken) d.done = true;
    const since = taken.map((d) => `partition ${d.i} ${(at() - d.at).toFixed(1)} s after it arrived`);
    events.push(`${at().toFixed(1)} s: published ${version} (${since.join(', ') || 'no partition'})`);
  };
  const publisher = async () => {
    for (let i = 1; i < publishing.staged.length; i++) {
      const due = t0 + i * PUBLISH_EVERY_S * 1000;
      while (running && Date.now() < due) await new Promise((r) => setTimeout(r, 100));
      if (!running) break;
      renameSync(publishing.staged[i], join(publishing.watched, `publish-${i}`));
      drops.push({ i, at: at(), done: false });
      events.push(`${at().toFixed(1)} s: partition ${i} moved into the watched folder`);
    }
  };

  // One replica killed without warning a third of the way in, started again 3 s later.
  const killer = async () => {
    await new Promise((r) => setTimeout(r, (SECONDS * 1000) / 3));
    if (!running) return;
    const victim = replicas[1];
    victim.child.kill('SIGKILL');
    events.push(`${at().toFixed(1)} s: replica 1 (pid ${victim.child.pid}) killed with SIGKILL`);
    await new Promise((r) => setTimeout(r, 3000));
    const back = await startReplica(1, portB);
    events.push(`${at().toFixed(1)} s: replica 1 serving again (pid ${back.child.pid})`);
  };

  const workers = Array.from({ length: LOAD_CONCURRENCY }, worker);
  const side = [publisher(), killer()];
  const progress = setInterval(() => say(`load: ${count} requests, ${failures.length} failed`), 10_000);
  await new Promise((r) => setTimeout(r, SECONDS * 1000));
  running = false;
  clearInterval(progress);
  await Promise.all(workers);
  await Promise.all(side);
  agent.destroy();
  phase = 'end';
  // The partitions already moved in are published, then both replicas must serve the last one.
  const deadline = Date.now() + 120_000;
  while (drops.some((d) => !d.done) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
  await stopProcess(publishing.child);

  // Each replica followed the publishes: the data_version it answers now is the last one published.
  let serving = [];
  for (let tries = 0; tries < 50; tries++) {
    serving = [];
    for (const r of replicas) {
      const res = await fetch(`${r.base}/v1/elements/Fe`);
      serving.push({ index: r.index, version: (await res.json()).data_version });
    }
    if (serving.every((x) => x.version === versions.at(-1))) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  const nginxLog = readFileSync(nginx.accessLog, 'utf8').split('\n');
  const retried = nginxLog.filter((l) => l.includes('"GET /v1/') && /upstream=\S+, /.test(l)).length;
  return {
    routes,
    failures,
    events,
    versions,
    serving,
    retried,
    requests: count,
    t0Seconds: (t0 - started) / 1000,
  };
}

// ---------------------------------------------------------------------------------------------
// Phase 3: pay per call through a slow facilitator, and a snapshot repair, under keyed load

/**
 * A facilitator over HTTP in front of the local one (settling on the dev chain), as
 * test/helpers/facilitator-stand-in.ts: the first settle of each payment misbehaves as
 * SETTLE_MODES says, in turn; a payment submitted again is settled plainly. Settlements reach the
 * chain one at a time (the local facilitator submits from one account; a hosted one orders its nonces).
 */
const SETTLE_MODES = [
  'ok',
  'slow',
  'drop',
  'fail-after',
  'error-after',
  'lost-rpc',
  'error-before',
  'hang',
  'refuse',
  'slow',
];
/**
 * SETTLE_MODES: ok; slow (settles, answers past the deadline); drop (settles, drops the
 * connection); fail-after (settles, answers "failed"); error-after (settles, answers 502);
 * lost-rpc (settles through an RPC connection that loses the reply to eth_sendRawTransaction: the
 * transaction is mined, the facilitator reports a failure); error-before (500, nothing settled);
 * hang (settles, never answers); refuse (400, nothing settled: the payer signs a new payment).
 */
async function facilitatorStandIn(real, slowMs, lossy) {
  const state = { settles: 0, byMode: new Map(), firstSeen: new Set() };
  let chain = Promise.resolve();
  const serially = (fn) => {
    const run = chain.then(fn);
    chain = run.catch(() => undefined);
    return run;
  };
  const readJson = async (req) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  };
  const json = (res, status, value) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(value));
  };
  const server = createHttpServer(async (req, res) => {
    try {
      if (req.method === 'GET' && req.url === '/supported') return json(res, 200, await real.getSupported());
      const { paymentPayload, paymentRequirements } = await readJson(req);
      if (req.url === '/verify')
        return json(res, 200, await real.verify(paymentPayload, paymentRequirements));
      if (req.url !== '/settle') return json(res, 404, { error: 'not found' });
      const nonce = String(paymentPayload?.payload?.authorization?.nonce);
      const mode = state.firstSeen.has(nonce)
        ? 'ok'
        : SETTLE_MODES[state.firstSeen.size % SETTLE_MODES.length];
      state.firstSeen.add(nonce);
      state.settles++;
      state.byMode.set(mode, (state.byMode.get(mode) ?? 0) + 1);
      if (mode === 'error-before') return json(res, 500, { error: 'internal error' });
      if (mode === 'refuse')
        return json(res, 400, {
          success: false,
          errorReason: 'invalid_exact_evm_payload_signature',
          transaction: '',
          network: paymentRequirements.network,
        });
      if (mode === 'lost-rpc')
        return json(res, 200, await serially(() => lossy.settle(paymentPayload, paymentRequirements)));
      const result = await serially(() => real.settle(paymentPayload, paymentRequirements));
      if (mode === 'hang') return; // settled; the answer never comes
      if (mode === 'fail-after')
        return json(res, 200, {
          success: false,
          errorReason: 'invalid_exact_evm_transaction_failed',
          transaction: '',
          network: paymentRequirements.network,
        });
      if (mode === 'slow') await new Promise((r) => setTimeout(r, slowMs));
      if (mode === 'drop') return req.socket.destroy();
      if (mode === 'error-after') {
        res.writeHead(502, { 'content-type': 'text/html' });
        return res.end('<html>502 Bad Gateway</html>');
      }
      return json(res, 200, result);
    } catch (e) {
      json(res, 500, { error: e.message });
    }
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    state,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/**
 * A JSON-RPC proxy in front of the chain that forwards every call but loses the reply to
 * eth_sendRawTransaction (as test/helpers/facilitator-stand-in.ts): the transaction is mined, its
 * sender never hears so.
 */
async function lossyRpc(target) {
  const server = createHttpServer(async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const body = Buffer.concat(chunks).toString('utf8');
    const upstream = await fetch(target, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    const text = await upstream.text();
    if (body.includes('eth_sendRawTransaction')) return req.socket.destroy();
    res.writeHead(upstream.status, { 'content-type': 'application/json' });
    res.end(text);
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** A GET: status (0 when the connection failed or dropped), headers and body. */
function httpGet(url, headers, agent) {
  return new Promise((ok) => {
    const begun = performance.now();
    const req = request(url, { headers, agent, timeout: 60_000 }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () =>
        ok({
          status: res.statusCode,
          headers: res.headers,
          body: Buffer.concat(chunks),
          ms: performance.now() - begun,
        }),
      );
      res.on('error', (e) => ok({ status: 0, error: e.message, ms: performance.now() - begun }));
    });
    req.on('timeout', () => req.destroy(new Error('timeout after 60 s')));
    req.on('error', (e) => ok({ status: 0, error: e.message, ms: performance.now() - begun }));
    req.end();
  });
}

/** The problem code of an answer (its JSON body's `code`), or '' (the body may be gzip'ed: asked without). */
function codeOf(a) {
  try {
    return JSON.parse(a.body.toString('utf8')).code ?? '';
  } catch {
    return '';
  }
}

/** Zeroes the first page (SQLite's change counter) and 64 KiB in the middle, as test/integration/snapshot/recovery.test.ts does. */
function damageFile(path) {
  const size = statSync(path).size;
  const fd = openSync(path, 'r+');
  try {
    writeSync(fd, Buffer.alloc(4096, 0), 0, 4096, 0);
    writeSync(fd, Buffer.alloc(64 * 1024, 0), 0, 64 * 1024, Math.floor(size / 2 / 4096) * 4096);
  } finally {
    closeSync(fd);
  }
}

const PAID_LOAD_ROUTES = [
  [0.3, '/v1/elements', () => '/v1/elements'],
  [0.2, '/v1/elements/{symbol}', () => `/v1/elements/${pick(['Fe', 'Ni', 'O', 'Cu', 'Co', 'Pt'])}`],
  [0.15, '/v1/elements/{symbol}/history', () => `/v1/elements/${pick(['Fe', 'Ni', 'O', 'Cu'])}/history`],
  [0.1, '/v1/subjects/{type}/{id}', () => '/v1/subjects/topic/T10030'],
  [0.13, '/v1/research', () => `/v1/research?q=${encodeURIComponent(pick(pools.q))}`],
  [0.12, '/v1/lab/quote', () => `/v1/lab/quote?q=${encodeURIComponent(pick(pools.labQuoted))}`],
];
/** What the paid calls ask (no key): two element histories, a topic, research (a worker thread). */
const PAID_PATHS = [
  '/v1/elements/Fe/history',
  '/v1/subjects/topic/T10030',
  '/v1/research?q=oxygen%20evolution',
  '/v1/elements/Ni/history',
];
/** Temporary answers a keyed GET may get while the served snapshot is damaged (docs/operations.md). */
const DAMAGE_CODES = new Set(['data_unavailable', 'worker_unavailable']);

const paidInfra = { chain: null, standIn: null, lossy: null };

async function paidRepairPhase(portN, ports) {
  phase = 'paid';
  const app = resolve(MAIN, '../../..');
  const { startDevChain, DEV_KEYS, BASE_SEPOLIA_USDC } = await import('../scripts/dev-chain.mjs');
  const { localFacilitator } = await import(join(app, 'dist/payments/local-facilitator.js'));
  const { readPointer, snapshotFile } = await import(join(app, 'dist/snapshot/folder.js'));
  const payer = privateKeyToAccount(DEV_KEYS.payer);
  const payTo = privateKeyToAccount(DEV_KEYS.payTo).address;
  const chain = await startDevChain();
  paidInfra.chain = chain;
  await chain.fund(payer.address, 1_000_000_000n);
  const fromBlock = await chain.client.getBlockNumber();
  const lossy = await lossyRpc(chain.rpcUrl);
  const standIn = await facilitatorStandIn(
    localFacilitator({ rpcUrl: chain.rpcUrl, privateKey: DEV_KEYS.facilitator, networks: ['base-sepolia'] }),
    (PAID_SETTLE_TIMEOUT_S + 1.5) * 1000,
    localFacilitator({ rpcUrl: lossy.url, privateKey: DEV_KEYS.facilitator, networks: ['base-sepolia'] }),
  );
  paidInfra.standIn = standIn;
  paidInfra.lossy = lossy;

  // Both replicas again, now taking payments (phases 1 and 2 ran with payments off).
  const events = [];
  const t0 = Date.now();
  const at = () => ((Date.now() - t0) / 1000).toFixed(1);
  const exited = await Promise.all(replicas.map((r) => stopProcess(r.child)));
  if (!exited.every(Boolean)) events.push('a replica did not exit within 20 s of SIGTERM (killed)');
  Object.assign(baseEnv, {
    X402_NETWORKS: 'base-sepolia',
    X402_PAY_TO_EVM: payTo,
    X402_FACILITATOR_URL: standIn.url,
    X402_EVM_RPC_URL: chain.rpcUrl,
    X402_SETTLE_TIMEOUT_SECONDS: String(PAID_SETTLE_TIMEOUT_S),
  });
  await Promise.all(ports.map((port, i) => startReplica(i, port)));
  events.push(
    `${at()} s: both replicas restarted taking payments (settle deadline ${PAID_SETTLE_TIMEOUT_S} s)`,
  );
  say(
    `paid: ${PAID} paid calls (${PAID_CONCURRENCY} at a time) through a facilitator misbehaving on /settle, and a snapshot damaged and rebuilt, under keyed load`,
  );

  const bases = { nginx: `http://127.0.0.1:${portN}`, 0: replicas[0].base, 1: replicas[1].base };
  const localAddress = `127.${int(1, 254)}.${int(0, 255)}.${int(1, 254)}`;
  const loadAgent = new Agent({ keepAlive: true, maxSockets: PAID_LOAD_CONCURRENCY, localAddress });
  const paidAgent = new Agent({ keepAlive: true, maxSockets: PAID_CONCURRENCY * 2, localAddress });
  const repair = { damagedAt: null, repairedAt: null, version: null, fellBackTo: null, rebuilt: null };
  // A 503 of the damage is allowed for a request answered after the damage and sent before both replicas said ok again.
  const inDamage = (begun) =>
    repair.damagedAt !== null &&
    Date.now() >= repair.damagedAt &&
    (repair.repairedAt === null || begun < repair.repairedAt);

  // The keyed load.
  const load = { n: 0, byStatus: new Map(), byRoute: new Map(), wrong: [] };
  let running = true;
  const loadWorker = async () => {
    while (running) {
      const [, name, make] = weighted(PAID_LOAD_ROUTES.map((r) => [r[0], r]));
      const path = make();
      const id = `soak-p${load.n++}`;
      const begun = Date.now();
      const a = await httpGet(
        `${bases.nginx}${path}`,
        { authorization: `Bearer ${pools.keys.professional}`, 'x-request-id': id },
        loadAgent,
      );
      const code = a.status === 200 ? '' : codeOf(a);
      const key = `${a.status || 'none'}${code ? ` ${code}` : ''}`;
      load.byStatus.set(key, (load.byStatus.get(key) ?? 0) + 1);
      const row = load.byRoute.get(name) ?? { n: 0, ok: 0, temporary: 0 };
      load.byRoute.set(name, row);
      row.n++;
      const temporary =
        a.status === 503 && DAMAGE_CODES.has(code) && a.headers['retry-after'] && inDamage(begun);
      if (a.status === 200) row.ok++;
      else if (temporary) row.temporary++;
      else
        load.wrong.push({
          t: at(),
          path,
          id,
          status: a.status,
          error: a.error,
          retryAfter: a.headers?.['retry-after'],
          body: a.body?.subarray(0, 300).toString('utf8'),
        });
    }
  };

  // The paid calls.
  const client = new x402Client();
  registerExactEvmScheme(client, { signer: payer });
  const balanceBefore = await chain.balanceOf(payer.address);
  const calls = [];
  let nextCall = 0;
  const paidWorker = async () => {
    while (nextCall < PAID) {
      const i = nextCall++;
      const path = PAID_PATHS[i % PAID_PATHS.length];
      // Even calls through nginx, odd ones straight to a replica in turn.
      const via = i % 2 === 0 ? 'nginx' : String((i >> 1) % 2);
      const call = {
        i,
        path,
        via,
        answers: [],
        contents: 0,
        amount: 0n,
        nonce: null,
        transaction: null,
        wrong: [],
        /** Nonces of payments answered 402 settlement_failed (each replaced by a new one). */
        refused: [],
      };
      calls.push(call);
      const url = `${bases[via]}${path}`;
      const id = `soak-pay${i}`;
      const terms = await httpGet(url, { 'x-request-id': `${id}-terms` }, paidAgent);
      call.answers.push(`${terms.status}${terms.status === 402 ? '' : ` ${codeOf(terms)}`}`);
      if (terms.status !== 402 || !terms.headers['payment-required']) {
        call.wrong.push({ status: terms.status, body: terms.body?.subarray(0, 300).toString('utf8') });
        continue;
      }
      const required = decodePaymentRequiredHeader(terms.headers['payment-required']);
      const deadline = Date.now() + 120_000;
      // A payment refused (402 settlement_failed: the facilitator refused, the chain shows no
      // transfer) is replaced by a new one, as a payer would; at most three.
      for (let payment = 0; payment < 3 && call.contents === 0 && call.wrong.length === 0; payment++) {
        const payload = await client.createPaymentPayload(required);
        call.amount = BigInt(payload.accepted.amount);
        call.nonce = payload.payload.authorization.nonce.toLowerCase();
        const signature = encodePaymentSignatureHeader(payload);
        for (let attempt = 0; Date.now() < deadline; attempt++) {
          const begun = Date.now();
          const a = await httpGet(
            url,
            { 'payment-signature': signature, 'x-request-id': `${id}-${payment}-${attempt}` },
            paidAgent,
          );
          const code = a.status === 200 ? '' : codeOf(a);
          call.answers.push(`${a.status || `none (${a.error})`}${code ? ` ${code}` : ''}`);
          if (a.status === 200) {
            call.contents++;
            const receipt = a.headers['payment-response']
              ? decodePaymentResponseHeader(a.headers['payment-response'])
              : null;
            if (!receipt?.success) call.wrong.push({ status: 200, body: 'no PAYMENT-RESPONSE receipt' });
            call.transaction = receipt?.transaction ?? null;
            break;
          }
          if (a.status === 402 && code === 'settlement_failed') {
            call.refused.push(call.nonce);
            break;
          }
          const pending = a.status === 503 && code === 'settlement_pending' && a.headers['retry-after'];
          const damaged =
            a.status === 503 && DAMAGE_CODES.has(code) && a.headers['retry-after'] && inDamage(begun);
          if (a.status !== 0 && !pending && !damaged) {
            call.wrong.push({
              status: a.status,
              id: `${id}-${payment}-${attempt}`,
              body: a.body?.subarray(0, 400).toString('utf8'),
            });
            break;
          }
          // Retry-After says 10 s for a pending settlement; the soak asks sooner (allowed, and harder).
          await new Promise((r) =>
            setTimeout(r, Math.min(Number(a.headers?.['retry-after'] ?? 1), 2) * 1000),
          );
        }
      }
      if (call.contents === 0 && call.wrong.length === 0)
        call.wrong.push({ status: 'no content within 120 s' });
    }
  };

  // The repair: the served snapshot damaged in place, the fall back, `ri build`, the rebuilt file served again.
  const readyz = async (base) => {
    const a = await httpGet(`${base}/readyz`, {}, undefined);
    try {
      return JSON.parse(a.body.toString('utf8'));
    } catch {
      return { status: `HTTP ${a.status}` };
    }
  };
  const until = async (what, test, ms = 60_000) => {
    const end = Date.now() + ms;
    while (Date.now() < end) {
      const seen = await Promise.all([readyz(bases[0]), readyz(bases[1])]);
      if (seen.every(test)) return seen;
      await new Promise((r) => setTimeout(r, 250));
    }
    throw new Error(`paid phase: ${what} not seen within ${ms / 1000} s`);
  };
  const repairer = async () => {
    await new Promise((r) => setTimeout(r, PAID_DAMAGE_AT_S * 1000));
    const dir = join(dataDir, 'snapshots');
    const version = readPointer(dir, 'CURRENT');
    repair.version = version;
    repair.damagedAt = Date.now();
    damageFile(snapshotFile(dir, version));
    events.push(`${at()} s: snapshot ${version} (served) damaged in place`);
    const fell = await until(
      'the replicas setting the damaged snapshot aside',
      (r) => r.data_version !== version,
    );
    repair.fellBackTo = fell.map((r) => `${r.data_version} (${r.status})`);
    events.push(`${at()} s: both replicas set it aside: ${repair.fellBackTo.join(', ')}`);
    const built = await ri(['build']);
    repair.rebuilt = built.stdout.trim();
    events.push(
      `${at()} s: ri build exited ${built.status}, published ${repair.rebuilt}${built.stderr.trim() ? ` (${built.stderr.trim().split('\n').at(-1).slice(0, 200)})` : ''}`,
    );
    await until(
      'both replicas ok on the rebuilt snapshot',
      (r) => r.status === 'ok' && r.data_version === version,
    );
    repair.repairedAt = Date.now();
    events.push(`${at()} s: both replicas ready (status ok) on ${version} again, no restart`);
  };

  const loadWorkers = Array.from({ length: PAID_LOAD_CONCURRENCY }, loadWorker);
  const progress = setInterval(
    () =>
      say(
        `paid: ${calls.filter((c) => c.contents).length} of ${PAID} paid calls answered; load ${load.n} requests, ${load.wrong.length} wrong`,
      ),
    10_000,
  );
  let repairError = null;
  try {
    await Promise.all([
      Promise.all(Array.from({ length: PAID_CONCURRENCY }, paidWorker)),
      repairer().catch((e) => {
        repairError = e.message;
      }),
    ]);
    // Load on the repaired snapshot for a while longer.
    await new Promise((r) => setTimeout(r, PAID_AFTER_S * 1000));
  } finally {
    running = false;
    clearInterval(progress);
    await Promise.all(loadWorkers);
  }
  events.push(`${at()} s: load stopped`);
  // After the repair, research and lab (worker threads) on each replica answer from the rebuilt file.
  const after = [];
  for (const i of [0, 1])
    for (const path of [
      '/v1/research?q=perovskite',
      `/v1/lab/quote?q=${encodeURIComponent(pools.labQuoted[0])}`,
    ]) {
      const a = await httpGet(`${bases[i]}${path}`, { authorization: `Bearer ${pools.keys.professional}` });
      let version = null;
      try {
        version = JSON.parse(a.body.toString('utf8')).data_version ?? null;
      } catch {}
      after.push({ replica: i, path, status: a.status, version });
    }
  const finalReady = await Promise.all([readyz(bases[0]), readyz(bases[1])]);

  // What was charged: the payer's balance, the ledger, the transfers on chain.
  const balanceAfter = await chain.balanceOf(payer.address);
  const db = new pg.Client({ connectionString: PG_URL });
  await db.connect();
  const rows = (
    await db
      .query(`SELECT nonce, amount, status, "transaction" FROM ${schema}.payments`)
      .finally(() => db.end())
  ).rows;
  const transfers = await chain.client.getLogs({
    address: BASE_SEPOLIA_USDC,
    event: parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 value)'),
    args: { to: payTo },
    fromBlock,
  });
  loadAgent.destroy();
  paidAgent.destroy();
  await standIn.close();
  paidInfra.standIn = null;
  await lossy.close();
  paidInfra.lossy = null;
  return {
    seconds: (Date.now() - t0) / 1000,
    events,
    load,
    calls,
    repair,
    repairError,
    after,
    finalReady,
    settles: standIn.state,
    moved: balanceBefore - balanceAfter,
    rows,
    payer: payer.address.toLowerCase(),
    transfers: transfers.map((l) => ({ hash: l.transactionHash, value: l.args.value, from: l.args.from })),
  };
}

/** The paid phase's part of the report, and its verdicts. */
function reportPaid(paid, print, verdict) {
  print();
  print(
    `payments and a snapshot repair under keyed load (${paid.seconds.toFixed(0)} s; facilitator settle modes, first settle of each payment: ${[
      ...paid.settles.byMode,
    ]
      .map(([m, n]) => `${m} ${n}`)
      .join(', ')}; ${paid.settles.settles} settle requests in all):`,
  );
  for (const e of paid.events) print(`    ${e}`);
  if (paid.repairError) print(`  repair: ${paid.repairError}`);

  // The paid calls.
  const answers = new Map();
  for (const c of paid.calls) for (const a of c.answers) answers.set(a, (answers.get(a) ?? 0) + 1);
  const byVia = (via) => paid.calls.filter((c) => (via === 'nginx' ? c.via === 'nginx' : c.via !== 'nginx'));
  const answered = paid.calls.filter((c) => c.contents === 1 && c.wrong.length === 0);
  const wrongCalls = paid.calls.filter((c) => c.wrong.length > 0 || c.contents !== 1);
  const tries = paid.calls.map((c) => c.answers.length - 1);
  print(
    `  paid calls: ${paid.calls.length} (${byVia('nginx').length} through nginx, ${byVia('replica').length} straight to a replica); answers: ${[
      ...answers,
    ]
      .sort()
      .map(([s, n]) => `${s} x ${n}`)
      .join(', ')}`,
  );
  if (tries.length)
    print(
      `  paid requests per call (after the 402): ${Math.min(...tries)} to ${Math.max(...tries)}; ${paid.calls.filter((c) => c.answers.length > 2).length} calls needed a retry`,
    );
  for (const c of wrongCalls.slice(0, 10)) {
    print(`  wrong: paid call ${c.i} via ${c.via} ${c.path}: ${c.answers.join(' -> ')}`);
    for (const w of c.wrong)
      print(`       ${w.status} ${w.body ? JSON.stringify(w.body.slice(0, 300)) : ''}`);
    for (const w of c.wrong.filter((x) => x.id))
      for (const l of logLinesFor(w.id).slice(0, 3)) print(`       log ${l}`);
  }

  // The ledger, the balance and the chain.
  const rowsBy = new Map(paid.rows.map((r) => [r.nonce, r]));
  const settled = paid.rows.filter((r) => r.status === 'settled');
  const rowStatuses = new Map();
  for (const r of paid.rows) rowStatuses.set(r.status, (rowStatuses.get(r.status) ?? 0) + 1);
  const unbacked = paid.calls.filter((c) => {
    if (c.contents === 0) return false;
    const row = rowsBy.get(`${paid.payer}:${c.nonce}`);
    return row?.status !== 'settled' || row.transaction !== c.transaction;
  });
  const expected = answered.reduce((s, c) => s + c.amount, 0n);
  const ledgerSum = settled.reduce((s, r) => s + BigInt(r.amount), 0n);
  const chainHashes = new Set(paid.transfers.map((t) => t.hash.toLowerCase()));
  const ledgerHashes = new Set(settled.map((r) => String(r.transaction).toLowerCase()));
  const sameTransfers =
    paid.transfers.length === settled.length &&
    chainHashes.size === ledgerHashes.size &&
    [...chainHashes].every((h) => ledgerHashes.has(h));
  const chainSum = paid.transfers.reduce((s, t) => s + t.value, 0n);
  print(
    `  ledger: ${[...rowStatuses].map(([s, n]) => `${n} ${s}`).join(', ') || 'no rows'}; on chain: ${paid.transfers.length} USDC transfers to the payTo (${chainSum} atomic units); payer balance moved by ${paid.moved} (paid calls answered: ${expected})`,
  );
  for (const c of unbacked.slice(0, 5))
    print(
      `  a 200 without its settled row: paid call ${c.i} nonce ${c.nonce} receipt ${c.transaction}: ${JSON.stringify(rowsBy.get(`${paid.payer}:${c.nonce}`) ?? null)}`,
    );
  if (!sameTransfers) {
    for (const h of [...chainHashes].filter((x) => !ledgerHashes.has(x)).slice(0, 5))
      print(`  on chain, not settled in the ledger: ${h}`);
    for (const h of [...ledgerHashes].filter((x) => !chainHashes.has(x)).slice(0, 5))
      print(`  settled in the ledger, not on chain: ${h}`);
  }

  // The keyed load.
  print(
    `  keyed load through nginx (${PAID_LOAD_CONCURRENCY} at a time): ${paid.load.n} requests; ${[
      ...paid.load.byStatus,
    ]
      .sort()
      .map(([s, n]) => `${s} x ${n}`)
      .join(', ')}`,
  );
  for (const [name, r] of paid.load.byRoute)
    print(
      `    ${name.padEnd(32)} ${String(r.n).padStart(7)} requests, ${r.ok} 200, ${r.temporary} 503 of the damage`,
    );
  for (const w of paid.load.wrong.slice(0, 10)) {
    print(
      `  wrong at ${w.t} s: ${w.status || w.error} ${w.path} (${w.id}) retry-after ${w.retryAfter ?? '-'} ${JSON.stringify(w.body ?? '')}`,
    );
    for (const l of logLinesFor(w.id).slice(0, 3)) print(`       log ${l}`);
  }
  print(
    `  after the repair: ${paid.after.map((a) => `replica ${a.replica} ${a.path.split('?')[0]} ${a.status} ${a.version}`).join('; ')}; /readyz ${paid.finalReady.map((r) => `${r.status} ${r.data_version}`).join(', ')}`,
  );

  const wrongAnswers = wrongCalls.length;
  verdict(
    paid.calls.length === PAID && wrongAnswers === 0,
    `paid calls through a facilitator that is slow, drops, answers 5xx, answers "failed" after settling, loses its RPC reply, never answers or refuses on settle: ${answered.length} of ${PAID} answered 200 with a PAYMENT-RESPONSE (one content each); wrong statuses ${wrongAnswers} (budget 0)`,
  );
  // A refused payment must leave no transfer: its row is pending (until it expires), never settled.
  const refused = paid.calls.flatMap((c) => c.refused);
  const chargedRefused = refused.filter((n) => rowsBy.get(`${paid.payer}:${n}`)?.status === 'settled');
  const otherRows = paid.rows.filter(
    (r) => r.status !== 'settled' && !refused.some((n) => r.nonce === `${paid.payer}:${n}`),
  );
  verdict(
    unbacked.length === 0 && settled.length === answered.length && otherRows.length === 0,
    `ledger: ${settled.length} settled of ${paid.rows.length} rows for ${answered.length} paid answers, the others ${refused.length} refused payments; a 200 without its settled row: ${unbacked.length} (budget 0); a row neither settled nor refused: ${otherRows.length} (budget 0)`,
  );
  verdict(
    chargedRefused.length === 0,
    `charges without an answer: ${refused.length} payments refused (402 settlement_failed), ${chargedRefused.length} of them charged (budget 0)`,
  );
  verdict(
    paid.moved === expected && ledgerSum === expected && chainSum === expected && sameTransfers,
    `charged once: the payer's balance moved by ${paid.moved}, the prices of the answers sum to ${expected}; ${paid.transfers.length} transfers to the payTo on chain are ${sameTransfers ? 'exactly' : 'NOT'} the ${settled.length} settled rows' transactions`,
  );
  const r = paid.repair;
  const back =
    !paid.repairError &&
    r.rebuilt === r.version &&
    paid.after.every((a) => a.status === 200 && a.version === r.version) &&
    paid.finalReady.every((x) => x.status === 'ok' && x.data_version === r.version);
  const heavy = [...paid.load.byRoute]
    .filter(([name]) => name === '/v1/research' || name === '/v1/lab/quote')
    .reduce((s, [, x]) => s + x.n, 0);
  verdict(
    paid.load.wrong.length === 0,
    `keyed GETs across the damage and the repair: wrong statuses ${paid.load.wrong.length} of ${paid.load.n} (${heavy} research and lab; 503 data_unavailable or worker_unavailable with Retry-After allowed while damaged) (budget 0)`,
  );
  verdict(
    back,
    `snapshot repair without restart: ${r.version ?? 'none'} damaged, set aside (serving ${r.fellBackTo?.join(', ') ?? '-'}), ri build published ${r.rebuilt ?? '-'}, both replicas /readyz ok on it, research and lab answering from it`,
  );
}
// ---------------------------------------------------------------------------------------------

function percentile(values, p) {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/** The median of the samples of one replica process within `width` s of `t` (one sample is noisy). */
function rssAround(samples, t, width = 2) {
  const near = samples.filter((s) => Math.abs(s.t - t) <= width).map((s) => s.rss);
  return near.length ? percentile(near, 50) : null;
}

function logLinesFor(id) {
  const out = [];
  for (const r of replicas) {
    const text = existsSync(r.log) ? readFileSync(r.log, 'utf8') : '';
    for (const line of text.split('\n'))
      if (line.includes(id)) out.push(`replica ${r.index}: ${line.slice(0, 1500)}`);
  }
  return out;
}

function report(hostile, load, paid) {
  const lines = [];
  const print = (l = '') => lines.push(l);
  const verdicts = [];
  const verdict = (ok, text) => verdicts.push({ ok, text });

  print(
    `soak: ${HOSTILE.toLocaleString('en')} hostile requests, then ${SECONDS} s of mixed load (seed ${SEED}, node ${process.version})`,
  );
  print();
  print('hostile requests, by status (none: the connection closed without an answer):');
  for (const [via, statuses] of Object.entries(hostile.byStatus))
    print(
      `  ${via === 'nginx' ? 'through nginx' : 'to a replica '}: ${[...statuses]
        .sort((a, b) => a[0] - b[0])
        .map(([s, n]) => `${s || 'none'} ${n}`)
        .join(', ')}`,
    );
  print(
    `  through nginx ${hostile.byVia.nginx}, straight to a replica ${hostile.byVia.replica}; 5xx ${hostile.fiveXx.length}; unanswered ${hostile.noAnswer.length}`,
  );
  // Where each 5xx came from: a replica's answer; nginx finding no replica to answer (a replica
  // failed on a connection, or every replica is set aside after failing); or nginx's own answer
  // to a request it never passes on (nginx's log says upstream "-").
  // nginx answers a failed upstream with its own 503 service_unavailable (deploy/nginx.conf): the
  // log's upstream_status keeps what nginx met (502 or 504 for a failure, else the replica's status).
  const upstreamOf = new Map();
  for (const line of readFileSync(nginx.accessLog, 'utf8').split('\n')) {
    const m = / upstream=(.*?) upstream_status=(.*?) rt=.* id=(\S+)$/.exec(line);
    if (m) upstreamOf.set(m[3], { addr: m[1], status: m[2].split(', ').at(-1) });
  }
  for (const f of hostile.fiveXx) {
    const upstream = f.viaNginx ? upstreamOf.get(f.id) : undefined;
    f.origin = !f.viaNginx
      ? 'service'
      : upstream?.addr === '-' || (upstream === undefined && f.status === 501)
        ? 'nginx'
        : /^127\.0\.0\.1:\d+$/.test(upstream?.addr ?? '') && !['502', '504'].includes(upstream?.status ?? '')
          ? 'service'
          : 'no replica';
  }
  const service5xx = hostile.fiveXx.filter((f) => f.origin === 'service');
  const noReplica5xx = hostile.fiveXx.filter((f) => f.origin === 'no replica');
  const own5xx = hostile.fiveXx.filter((f) => f.origin === 'nginx');
  print(
    `  5xx: ${service5xx.length} answered by a replica, ${noReplica5xx.length} by nginx for want of a replica (upstream failed or none left), ${own5xx.length} nginx's own (never passed on)`,
  );
  for (const f of [...service5xx.slice(0, 10), ...noReplica5xx.slice(0, 3), ...own5xx.slice(0, 2)]) {
    print(
      `  5xx: ${f.status} from ${f.origin} via ${f.via} for ${f.label}: ${JSON.stringify(f.request)} [${f.headers}]`,
    );
    print(`       answer: ${JSON.stringify(f.answer.slice(0, 300))}`);
    for (const l of logLinesFor(f.id).slice(0, 3)) print(`       log ${l}`);
  }
  for (const f of hostile.noAnswer.slice(0, 5))
    print(`  unanswered (${f.error}) via ${f.via}: ${JSON.stringify(f.request)}`);

  print(
    `  answered in p50 ${percentile(hostile.ms, 50).toFixed(0)} ms, p99 ${percentile(hostile.ms, 99).toFixed(0)} ms, max ${Math.max(...hostile.ms).toFixed(0)} ms (${HOSTILE_CONCURRENCY} at a time, ${(hostile.sent / hostile.seconds).toFixed(0)} requests/s)`,
  );
  const nginxErrors = nginx
    .stderr()
    .split('\n')
    .filter((l) => /\[(error|crit|alert|emerg)\]/.test(l));
  writeFileSync(join(logs, 'nginx-error.log'), nginx.stderr());
  const kinds = new Map();
  for (const l of nginxErrors) {
    const kind = /\] \d+#\d+: (?:\*\d+ )?([^,(]+)/.exec(l)?.[1]?.trim() ?? l.slice(0, 80);
    kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
  }
  for (const [kind, n] of kinds) print(`  nginx error log (whole soak): ${n} x ${kind}`);

  print();
  print('mixed load through nginx (keyed, Accept-Encoding: gzip, deflate, br):');
  print(
    `  ${'route'.padEnd(32)} ${'requests'.padStart(9)} ${'failed'.padStart(7)} ${'5xx'.padStart(5)} ${'429'.padStart(5)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)}`,
  );
  let total = 0;
  let failed = 0;
  for (const [name, r] of load.routes) {
    total += r.n;
    failed += r.failed;
    print(
      `  ${name.padEnd(32)} ${String(r.n).padStart(9)} ${String(r.failed).padStart(7)} ${String(r.fiveXx).padStart(5)} ${String(r.limited).padStart(5)} ${percentile(r.ms, 50).toFixed(1).padStart(8)} ${percentile(r.ms, 99).toFixed(1).padStart(8)}`,
    );
  }
  print(
    `  ${'all'.padEnd(32)} ${String(total).padStart(9)} ${String(failed).padStart(7)}   (${(total / SECONDS).toFixed(0)} requests/s; ${load.retried} GETs retried by nginx on the other replica)`,
  );
  for (const f of load.failures.slice(0, 10)) {
    print(
      `  failed at ${f.t} s: ${f.status || f.error} ${f.path} (${f.id}) ${f.body ? JSON.stringify(f.body.slice(0, 200)) : ''}`,
    );
    for (const l of logLinesFor(f.id).slice(0, 3)) print(`       log ${l}`);
  }
  print('  events:');
  for (const e of load.events) print(`    ${e}`);
  const lastVersion = load.versions.at(-1);
  print(`  serving at the end: ${load.serving.map((s) => `replica ${s.index} ${s.version}`).join(', ')}`);

  // RSS: each replica process on its own (the restarted replica is a new process).
  print();
  print('RSS (VmRSS, MB; median of the samples within 2 s):');
  const t0 = load.t0Seconds;
  const mid = t0 + SECONDS / 2;
  const end = t0 + SECONDS;
  // The replicas of phases 1 and 2 (phase 3 restarts them with payments on).
  const pids = [...new Set(rssSamples.filter((s) => s.phase !== 'paid').map((s) => s.pid))];
  let survivorGrowth = null;
  let hostilePeak = 0;
  let overallPeak = 0;
  for (const pid of pids) {
    const s = rssSamples.filter((x) => x.pid === pid && x.phase !== 'paid');
    const index = s[0].index;
    const peakHostile = Math.max(0, ...s.filter((x) => x.phase === 'hostile').map((x) => x.rss));
    const peak = Math.max(...s.map((x) => x.rss));
    hostilePeak = Math.max(hostilePeak, peakHostile);
    overallPeak = Math.max(overallPeak, peak);
    const first = s[0];
    const beforeLoad = rssAround(s, t0);
    const atMid = rssAround(s, mid);
    const atEnd = rssAround(s, end - 1);
    const growth = atMid && atEnd ? (atEnd - atMid) / atMid : null;
    const killed = load.events.some((e) => e.includes(`(pid ${pid}) killed`));
    const restarted = first.t > t0;
    if (!killed && !restarted && growth !== null) survivorGrowth = Math.max(survivorGrowth ?? -1, growth);
    print(
      `  replica ${index} pid ${pid}${killed ? ' (killed)' : ''}${restarted ? ` (started at ${(first.t - t0).toFixed(0)} s of the load)` : ''}: ` +
        `first ${mb(first.rss)}, ${peakHostile ? `peak during the hostile requests ${mb(peakHostile)}, ` : ''}` +
        `load start ${beforeLoad ? mb(beforeLoad) : '-'}, middle ${atMid ? mb(atMid) : '-'}, end ${atEnd ? mb(atEnd) : '-'}, ` +
        `growth over the last half ${growth === null ? '-' : `${(growth * 100).toFixed(1)}%`}, peak ${mb(peak)}`,
    );
  }

  const hostile5xx = hostile.fiveXx.filter((f) => f.origin !== 'nginx').length;
  const nginx5xx = hostile.fiveXx.filter((f) => f.origin === 'nginx');
  verdict(
    failed === 0,
    `failed GETs across the replica kill and ${load.versions.length} publishes: ${failed} (budget 0)`,
  );
  verdict(
    hostile5xx === 0 && hostile.sent === HOSTILE,
    `5xx from the replicas (answered, or none to answer) over ${hostile.sent.toLocaleString('en')} hostile requests: ${hostile5xx} (budget 0)` +
      (nginx5xx.length
        ? `; nginx's own error pages: ${nginx5xx.length} (${[...new Set(nginx5xx.map((f) => f.status))].join(', ')}, never sent to a replica)`
        : ''),
  );
  verdict(
    survivorGrowth !== null && survivorGrowth < BUDGET.rssGrowth,
    `RSS growth over the last half of the soak (the replica never killed): ${survivorGrowth === null ? 'not measured' : `${(survivorGrowth * 100).toFixed(1)}%`} (budget < 10%)`,
  );
  verdict(
    hostilePeak > 0 && hostilePeak < BUDGET.rssPeakMb * 1024 * 1024,
    `peak RSS with ${hostile.sent.toLocaleString('en')} requests of mixed Host headers: ${mb(hostilePeak)} MB, whole soak ${mb(overallPeak)} MB (budget < 300 MB)`,
  );
  const followed =
    load.versions.length > 0 &&
    new Set(load.versions).size === load.versions.length &&
    load.serving.every((s) => s.version === lastVersion);
  verdict(
    followed,
    `publishes: ${load.versions.length}, each a new data_version, both replicas serving the last (${lastVersion ?? 'none'})`,
  );

  reportPaid(paid, print, verdict);

  print();
  for (const v of verdicts) print(`${v.ok ? 'ok    ' : 'FAILED'} ${v.text}`);
  console.log(lines.join('\n'));
  return verdicts.every((v) => v.ok);
}

let ok = false;
try {
  ok = await main();
} catch (e) {
  console.error(`soak: ${e.stack ?? e}`);
}
ok = (await cleanup()) && ok;
// The logs stay for a failed soak (the lines of a 5xx or a failed GET are in them), or when asked.
if (ok && !process.env.SOAK_KEEP) rmSync(work, { recursive: true, force: true });
else console.error(`soak: replica and nginx logs kept in ${work}`);
process.exitCode = ok ? 0 : 1;
