import { execFile, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gunzipSync } from 'node:zlib';
import { DuckDBInstance } from '@duckdb/node-api';
import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXPORT_FILE_USD } from '../../../src/access/policy.js';
import { writeExports, writeMissingExports } from '../../../src/exports/write-exports.js';
import { usdToAtomic } from '../../../src/payments/networks.js';
import { DEFAULT_PARAMETERS } from '../../../src/scoring/parameters.js';
import { exportsFolder, exportsRoot } from '../../../src/snapshot/exports.js';
import { snapshotFile } from '../../../src/snapshot/folder.js';
import { buildSnapshot } from '../../../src/snapshot-build/build-snapshot.js';
import { tempDir } from '../../helpers/works.js';
import { PAY_TO, PAYER, paidService, payingFetch } from '../../helpers/x402.js';

/**
 * The whole-table exports over the real listener, on a service taking payments on the local chain:
 * the list, whole and ranged downloads checked against the listed sha256, the plans and a per-file
 * payment, the files read by DuckDB and pandas by URL, versions published after the first each
 * with their own files, and a write that fails half way leaving nothing.
 */
interface ListedFile {
  file: string;
  table: string;
  format: 'parquet' | 'csv';
  media_type: string;
  bytes: number;
  sha256: string;
  rows: number;
  url: string;
  price_usd: number;
}
interface Listed {
  data_version: string;
  current: boolean;
  written: boolean;
  files: ListedFile[];
}
interface ExportsList {
  versions: Listed[];
  tables: { table: string; columns: { name: string }[] }[];
  data_version: string;
}

/** A python3 with pandas (Debian's python3-pandas), found before any server runs in this process. */
const python = ['/usr/bin/python3', 'python3'].find(
  (p) => spawnSync(p, ['-c', 'import pandas'], { stdio: 'ignore' }).status === 0,
);

let service: Awaited<ReturnType<typeof paidService>>;
let base: string;
let keys: Record<string, string>;
let version: string;
let list: ExportsList;

beforeAll(async () => {
  service = await paidService();
  base = service.server.base;
  keys = service.ctx.keys;
  version = service.ctx.version;
  list = (await (await fetch(`${base}/v1/exports`)).json()) as ExportsList;
}, 120_000);
afterAll(async () => {
  await service?.close();
});

const auth = (plan: string, headers: Record<string, string> = {}) => ({
  headers: { authorization: `Bearer ${keys[plan]}`, ...headers },
});
const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
const fileOf = (name: string, of: Listed = list.versions[0]!) => of.files.find((f) => f.file === name)!;

describe('the list', () => {
  it('lists the current version with every table in both formats, open to anyone', () => {
    expect(list.versions.map((v) => [v.data_version, v.current, v.written])).toEqual([[version, true, true]]);
    const names = list.versions[0]!.files.map((f) => f.file).sort();
    const tables = ['element_history', 'elements', 'subject_history', 'subjects'];
    expect(names).toEqual(tables.flatMap((t) => [`${t}.csv.gz`, `${t}.parquet`]).sort());
    expect(list.tables.map((t) => t.table).sort()).toEqual(tables);
    for (const f of list.versions[0]!.files) {
      expect(f.url).toBe(`${base}/v1/exports/${version}/${f.file}`);
      expect(f.price_usd).toBe(EXPORT_FILE_USD);
      expect(f.sha256).toMatch(/^[0-9a-f]{64}$/);
    }
    expect(fileOf('elements.parquet').rows).toBe(118);
  });

  it('a pin to an unknown version is 410; a bad one 400', async () => {
    expect((await fetch(`${base}/v1/exports?data_version=0123456789abcdef`)).status).toBe(410);
    expect((await fetch(`${base}/v1/exports?data_version=nope`)).status).toBe(400);
  });
});

describe('downloads (Professional)', () => {
  it('each file whole: its bytes, size and sha256 as listed, as its media type', async () => {
    for (const f of list.versions[0]!.files) {
      const res = await fetch(f.url, auth('professional'));
      expect([f.file, res.status, res.headers.get('content-type')]).toEqual([f.file, 200, f.media_type]);
      expect(res.headers.get('accept-ranges')).toBe('bytes');
      expect(res.headers.get('etag')).toBe(`"${f.sha256}"`);
      const bytes = new Uint8Array(await res.arrayBuffer());
      expect([f.file, bytes.length, sha256(bytes)]).toEqual([f.file, f.bytes, f.sha256]);
    }
  });

  it('a Range resumes a download: 206 with Content-Range, the parts make the whole', async () => {
    const f = fileOf('subject_history.parquet');
    const cut = Math.floor(f.bytes / 3);
    const first = await fetch(f.url, auth('professional', { range: `bytes=0-${cut - 1}` }));
    expect([first.status, first.headers.get('content-range')]).toEqual([
      206,
      `bytes 0-${cut - 1}/${f.bytes}`,
    ]);
    const rest = await fetch(f.url, auth('professional', { range: `bytes=${cut}-` }));
    expect([rest.status, rest.headers.get('content-range')]).toEqual([
      206,
      `bytes ${cut}-${f.bytes - 1}/${f.bytes}`,
    ]);
    expect(rest.headers.get('content-length')).toBe(String(f.bytes - cut));
    const whole = Buffer.concat([
      Buffer.from(await first.arrayBuffer()),
      Buffer.from(await rest.arrayBuffer()),
    ]);
    expect(sha256(whole)).toBe(f.sha256);
    // The last bytes (a Parquet footer), and an If-Range of another file's version: the whole.
    const tail = await fetch(f.url, auth('professional', { range: 'bytes=-8' }));
    expect([
      tail.status,
      Buffer.from(await tail.arrayBuffer())
        .subarray(4)
        .toString(),
    ]).toEqual([206, 'PAR1']);
    const other = await fetch(f.url, auth('professional', { range: 'bytes=0-9', 'if-range': '"elsewhere"' }));
    expect([other.status, (await other.arrayBuffer()).byteLength]).toEqual([200, f.bytes]);
  });

  it('a range past the end is 416 with Content-Range: bytes */size', async () => {
    const f = fileOf('elements.csv.gz');
    const res = await fetch(f.url, auth('professional', { range: `bytes=${f.bytes}-` }));
    expect(res.status).toBe(416);
    expect(res.headers.get('content-range')).toBe(`bytes */${f.bytes}`);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(((await res.json()) as { code: string }).code).toBe('range_not_satisfiable');
  });

  it('HEAD gives the size without the body', async () => {
    const f = fileOf('subjects.parquet');
    const res = await fetch(f.url, { method: 'HEAD', ...auth('professional') });
    expect([res.status, res.headers.get('content-length')]).toEqual([200, String(f.bytes)]);
  });

  it('an unknown file is 404 unknown_export; a version not kept 410; a bad name 400', async () => {
    const get = (path: string) => fetch(`${base}/v1/exports/${path}`, auth('professional'));
    const unknown = await get(`${version}/papers.parquet`);
    expect([unknown.status, ((await unknown.json()) as { code: string }).code]).toEqual([
      404,
      'unknown_export',
    ]);
    const gone = await get('0123456789abcdef/elements.parquet');
    expect([gone.status, ((await gone.json()) as { code: string }).code]).toEqual([410, 'data_version_gone']);
    expect((await get(`${version}/elements.xlsx`)).status).toBe(400);
    expect((await get(`${version}/elements.parquet?data_version=${version}`)).status).toBe(400);
  });
});

describe('plans and payment', () => {
  it('free and Personal keys get plan_required with an upgrade_url that answers', async () => {
    const f = fileOf('elements.parquet');
    for (const plan of ['free', 'personal']) {
      const res = await fetch(f.url, auth(plan));
      const body = (await res.json()) as { code: string; required_plan: string; upgrade_url: string };
      expect([plan, res.status, body.code, body.required_plan]).toEqual([
        plan,
        403,
        'plan_required',
        'professional',
      ]);
      expect((await fetch(body.upgrade_url)).status).toBe(200);
    }
  });

  it('no key: 402 with the per-file terms; paid, the file; the same payment resumes it, charged once', async () => {
    const f = fileOf('subjects.csv.gz');
    const unpaid = await fetch(f.url);
    expect(unpaid.status).toBe(402);
    const required = decodePaymentRequiredHeader(unpaid.headers.get('payment-required')!);
    expect(required.accepts[0]!.amount).toBe(usdToAtomic(EXPORT_FILE_USD));
    const payment = encodePaymentSignatureHeader(await payingFetch().client.createPaymentPayload(required));
    const before = await service.chain.balanceOf(PAYER.address);
    const cut = 1000;
    const first = await fetch(f.url, {
      headers: { 'payment-signature': payment, range: `bytes=0-${cut - 1}` },
    });
    expect(first.status).toBe(206);
    expect(first.headers.get('payment-response')).toBeTruthy();
    const part = Buffer.from(await first.arrayBuffer());
    // The download cut off, resumed with the same payment: the rest, not charged again.
    const rest = await fetch(f.url, { headers: { 'payment-signature': payment, range: `bytes=${cut}-` } });
    expect(rest.status).toBe(206);
    expect(sha256(Buffer.concat([part, Buffer.from(await rest.arrayBuffer())]))).toBe(f.sha256);
    const after = await service.chain.balanceOf(PAYER.address);
    expect(before - after).toBe(BigInt(usdToAtomic(EXPORT_FILE_USD)));
    expect(await service.chain.balanceOf(PAY_TO)).toBeGreaterThanOrEqual(
      BigInt(usdToAtomic(EXPORT_FILE_USD)),
    );
    // The payment buys that file: another file with it is a replay.
    const other = await fetch(fileOf('elements.csv.gz').url, { headers: { 'payment-signature': payment } });
    expect(other.status).toBe(402);
  });

  it('/pricing, the OpenAPI document and /.well-known/x402 state the per-file price', async () => {
    const pricing = await (await fetch(`${base}/pricing`)).text();
    expect(pricing).toContain('/v1/exports/{data_version}/{file}');
    expect(pricing).toContain(`${EXPORT_FILE_USD.toFixed(2)} USD`);
    const known = (await (await fetch(`${base}/.well-known/x402`)).json()) as {
      operations: { path: string; price: { usd: number } }[];
    };
    expect(known.operations.find((o) => o.path === '/v1/exports/{data_version}/{file}')?.price).toEqual({
      usd: EXPORT_FILE_USD,
    });
    const doc = (await (await fetch(`${base}/v1/openapi.json`)).json()) as {
      paths: Record<
        string,
        { get: { 'x-payment-info'?: { price: unknown }; responses: Record<string, unknown> } }
      >;
    };
    const file = doc.paths['/exports/{data_version}/{file}']!.get;
    expect(file['x-payment-info']?.price).toEqual({ usd: EXPORT_FILE_USD });
    expect(Object.keys(file.responses)).toEqual(expect.arrayContaining(['200', '206', '402', '403', '416']));
  });
});

describe('read by URL', () => {
  it("the files hold the API's own answers: Fe's yearly history, the subjects", async () => {
    const csv = gunzipSync(
      Buffer.from(
        await (await fetch(fileOf('element_history.csv.gz').url, auth('professional'))).arrayBuffer(),
      ),
    )
      .toString()
      .trim()
      .split('\n');
    expect(csv[0]).toBe('symbol,year,ri,ris,hri,papers');
    const fe = csv.filter((l) => l.startsWith('Fe,')).map((l) => l.split(','));
    const api = (await (await fetch(`${base}/v1/elements/Fe/history`, auth('professional'))).json()) as {
      series: { period: string; ri: number; ris: number; hri: number | null; papers: number }[];
    };
    expect(
      fe.map((r) => [r[1], Number(r[2]), Number(r[3]), r[4] === '' ? null : Number(r[4]), Number(r[5])]),
    ).toEqual(api.series.map((p) => [p.period, p.ri, p.ris, p.hri, p.papers]));
  });

  it("DuckDB's read_parquet reads each Parquet file as a ranged HTTP reader fetches it", async () => {
    const db = await DuckDBInstance.create(':memory:');
    const con = await db.connect();
    // httpfs is downloaded on first use, which a machine without the internet cannot: where it
    // loads, read_parquet reads the URL itself; elsewhere the file is fetched as httpfs does
    // (HEAD for the size, the footer, then the rest, all by Range) and read from those bytes.
    const httpfs = await con
      .run('LOAD httpfs')
      .then(() => true)
      .catch(() => false);
    if (httpfs)
      await con.run(
        `CREATE SECRET ri (TYPE http, EXTRA_HTTP_HEADERS MAP {'Authorization': 'Bearer ${keys.professional}'})`,
      );
    const dir = tempDir('ri-exports-read-');
    for (const f of list.versions[0]!.files.filter((x) => x.format === 'parquet')) {
      let source = f.url;
      if (!httpfs) {
        source = join(dir, f.file);
        writeFileSync(source, await rangedRead(f.url));
      }
      const count = await con.runAndReadAll(`SELECT count(*)::INTEGER AS n FROM read_parquet('${source}')`);
      expect([f.file, count.getRowObjects()[0]!.n]).toEqual([f.file, f.rows]);
    }
    const fe = await con.runAndReadAll(
      `SELECT ris FROM read_parquet('${httpfs ? fileOf('elements.parquet').url : join(dir, 'elements.parquet')}') WHERE symbol = 'Fe'`,
    );
    const api = (await (await fetch(`${base}/v1/elements/Fe`)).json()) as { ris: number };
    expect(fe.getRowObjects()[0]!.ris).toBe(api.ris);
    con.closeSync();
    db.closeSync();
  });

  it('pandas reads the gzip CSV by its URL alone (and the Parquet, where pyarrow is there)', async () => {
    if (!python) {
      if (process.env.REQUIRE_PANDAS === '1') throw new Error('python3 with pandas is required');
      console.warn('exports: no python3 with pandas here; the pandas read is skipped');
      return;
    }
    const f = fileOf('subjects.csv.gz');
    const script = `
import sys, pandas as pd
opts = {"Authorization": "Bearer ${keys.professional}"}
df = pd.read_csv(sys.argv[1], storage_options=opts)
print(len(df), ",".join(df.columns))
try:
    import pyarrow  # noqa
    print(len(pd.read_parquet(sys.argv[2], storage_options=opts)))
except ImportError:
    print("no-pyarrow")
`;
    // Not spawnSync: the server pandas reads from answers on this thread.
    const run = await promisify(execFile)(python, ['-c', script, f.url, fileOf('subjects.parquet').url]);
    expect(run.stderr).toBe('');
    const [csv, parquet] = run.stdout.trim().split('\n');
    expect(csv).toBe(`${f.rows} subject_type,subject_id,name,field,subfield,domain,ri,ris,hri,paper_count`);
    if (parquet !== 'no-pyarrow') expect(Number(parquet)).toBe(f.rows);
  });
});

describe('versions', () => {
  it('each published version lists its own files; a pin lists that one; pruned, its files go', async () => {
    const { dataDir } = service.ctx;
    const snapshots = join(dataDir, 'snapshots');
    const build = (tau: number) =>
      buildSnapshot(join(dataDir, 'corpus.duckdb'), snapshots, {
        params: { ...DEFAULT_PARAMETERS, risDecayYears: tau },
        keep: 2,
        placed: async (v) => void (await writeExports(snapshots, v)),
      });
    const second = await build(4);
    await service.ctx.snapshots.refresh();
    const listed = async (query = '') =>
      (await (await fetch(`${base}/v1/exports${query}`)).json()) as ExportsList;
    const two = await listed();
    expect(two.versions.map((v) => [v.data_version, v.written])).toEqual([
      [second.version, true],
      [version, true],
    ]);
    // RIS is weighted anew: the scores differ, and so do the files.
    expect(fileOf('elements.parquet', two.versions[0]!).sha256).not.toBe(fileOf('elements.parquet').sha256);
    const pinned = await listed(`?data_version=${version}`);
    expect(pinned.versions.map((v) => v.data_version)).toEqual([version]);
    expect(fileOf('elements.parquet', pinned.versions[0]!).sha256).toBe(fileOf('elements.parquet').sha256);
    const old = await fetch(fileOf('elements.parquet').url, auth('professional'));
    expect(sha256(new Uint8Array(await old.arrayBuffer()))).toBe(fileOf('elements.parquet').sha256);
    // A third publication keeps two: the first version's snapshot and files are pruned.
    await build(5);
    expect(existsSync(exportsFolder(snapshots, version))).toBe(false);
    expect((await fetch(fileOf('elements.parquet').url, auth('professional'))).status).toBe(410);
    // A server finds a kept version without files and writes them again: the same bytes.
    const folder = exportsFolder(snapshots, second.version);
    rmSync(folder, { recursive: true });
    await writeMissingExports(snapshots, () => {});
    const again = await listed(`?data_version=${second.version}`);
    expect(again.versions[0]!.files).toEqual(two.versions[0]!.files);
  }, 120_000);

  it('a write that fails half way leaves no file of it', async () => {
    const snapshots = join(tempDir('ri-exports-fail-'), 'snapshots');
    cpSync(join(service.ctx.dataDir, 'snapshots'), snapshots, { recursive: true });
    const current = readdirSync(snapshots).find((n) => /^[0-9a-f]{16}\.sqlite$/.test(n))!;
    // A snapshot whose histories cannot be read: the elements are written, then it fails.
    const broken = 'fedcba9876543210';
    cpSync(join(snapshots, current), snapshotFile(snapshots, broken));
    const db = new Database(snapshotFile(snapshots, broken));
    db.exec('DROP TABLE history');
    db.close();
    await expect(writeExports(snapshots, broken)).rejects.toThrow(/history/);
    expect(existsSync(exportsFolder(snapshots, broken))).toBe(false);
    expect(readdirSync(exportsRoot(snapshots)).filter((n) => n.startsWith('.writing-'))).toEqual([]);
  });
});

/**
 * A Parquet file fetched as a ranged HTTP reader fetches it: HEAD for the size, the last 8 bytes
 * (the footer's length and PAR1), the footer, then the data before it, each by Range.
 */
async function rangedRead(url: string): Promise<Buffer> {
  const head = await fetch(url, { method: 'HEAD', ...auth('professional') });
  const size = Number(head.headers.get('content-length'));
  const range = async (from: number, to: number) => {
    const res = await fetch(url, auth('professional', { range: `bytes=${from}-${to}` }));
    expect([res.status, res.headers.get('content-range')]).toEqual([206, `bytes ${from}-${to}/${size}`]);
    return Buffer.from(await res.arrayBuffer());
  };
  const tail = await range(size - 8, size - 1);
  expect(tail.subarray(4).toString()).toBe('PAR1');
  const footerLength = tail.readUInt32LE(0);
  const footer = await range(size - 8 - footerLength, size - 9);
  const data = await range(0, size - 9 - footerLength);
  return Buffer.concat([data, footer, tail]);
}
