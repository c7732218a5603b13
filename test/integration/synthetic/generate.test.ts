import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CliError } from '../../../src/cli/cli-error.js';
import { run } from '../../../src/cli/generate.js';
import { generateCorpus, loadTopics, planCorpus } from '../../../src/synthetic/generate.js';
import { mix, Rng, WeightedSampler, zipfSampler } from '../../../src/synthetic/random.js';
import { buildWork, createCorpus, TITLE_ELEMENTS } from '../../../src/synthetic/records.js';
import { WORK_KEYS } from '../../helpers/openalex-work.js';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const TOPICS = existsSync(join(ROOT, 'fixtures/openalex/topics.json'))
  ? join(ROOT, 'fixtures/openalex/topics.json')
  : '/work/shared/data/openalex/topics.json';
const PART_PATH = /^works\/updated_date=\d{4}-\d{2}-\d{2}\/part_\d{3}\.gz$/;

interface WorkFields {
  is_paratext: boolean;
  doi: string | null;
  publication_year: number;
  topics: Array<{ score: number; id: string }>;
  primary_topic: { id: string } | null;
  keywords: Array<{ id: string; score: number }>;
  counts_by_year: Array<{ year: number; cited_by_count: number }>;
  cited_by_count: number;
  referenced_works: string[];
  referenced_works_count: number;
}

type Work = Record<string, unknown> & {
  id: string;
  title: string;
  updated_date: string;
  cited_by_count: number;
};

async function listFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  async function walk(d: string): Promise<void> {
    for (const entry of await readdir(d, { withFileTypes: true })) {
      const p = join(d, entry.name);
      if (entry.isDirectory()) await walk(p);
      else out.push(relative(dir, p).split('\\').join('/'));
    }
  }
  await walk(dir);
  return out.sort();
}

async function hashes(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const f of await listFiles(dir))
    out[f] = createHash('sha256')
      .update(await readFile(join(dir, f)))
      .digest('hex');
  return out;
}

async function readWorks(dir: string): Promise<Array<{ file: string; line: string; work: Work }>> {
  const out: Array<{ file: string; line: string; work: Work }> = [];
  for (const f of await listFiles(dir)) {
    const text = gunzipSync(await readFile(join(dir, f))).toString('utf8');
    for (const line of text.split('\n'))
      if (line) out.push({ file: f, line, work: JSON.parse(line) as Work });
  }
  return out;
}

const dirs: string[] = [];
async function tempDir(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'ri-generate-'));
  dirs.push(d);
  return d;
}

afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

describe('random', () => {
  it('is deterministic and uniform-ish', () => {
    const a = new Rng(42);
    const b = new Rng(42);
    const xs = Array.from({ length: 1000 }, () => a.next());
    expect(xs).toEqual(Array.from({ length: 1000 }, () => b.next()));
    const mean = xs.reduce((s, x) => s + x, 0) / xs.length;
    expect(mean).toBeGreaterThan(0.45);
    expect(mean).toBeLessThan(0.55);
    expect(mix(1, 2)).not.toBe(mix(2, 1));
  });

  it('zipf puts most mass on the first ranks', () => {
    const z = zipfSampler(100, 1.1);
    const rng = new Rng(7);
    const counts = new Array<number>(100).fill(0);
    for (let i = 0; i < 20_000; i++) counts[z.sample(rng)]!++;
    expect(counts[0]!).toBeGreaterThan(counts[10]! * 5);
    expect(new WeightedSampler([0, 1]).sampleWith(0.2)).toBe(1);
  });

  it('power law has many zeros and a long tail', () => {
    const rng = new Rng(3);
    const xs = Array.from({ length: 20_000 }, () => rng.powerLaw(2, 1.3));
    expect(xs.filter((x) => x <= 2).length / xs.length).toBeGreaterThan(0.4);
    expect(Math.max(...xs)).toBeGreaterThan(500);
  });
});

describe('buildWork', () => {
  it('writes valid JSON for every kind of work, first appearance and update', async () => {
    const corpus = createCorpus(9, 6000, await loadTopics(TOPICS));
    for (let i = 0; i < 6000; i++) {
      for (const [version, day] of [
        [0, '2025-11-06'],
        [1, '2026-02-01'],
      ] as const) {
        const line = buildWork(corpus, i, { version, updatedDay: day, firstDay: '2025-11-06' });
        expect(line).not.toMatch(/[:,[](NaN|undefined|-?Infinity)[,}\]]/);
        const w = JSON.parse(line) as {
          cited_by_count: number;
          counts_by_year: Array<{ cited_by_count: number }>;
        };
        expect(w.cited_by_count).toBeGreaterThanOrEqual(0);
      }
    }
  });

  it('gives the pinned bytes: the tables in src/synthetic/tables and the builder are what made them', async () => {
    // Made before the tables moved out of records.ts; a change to a table or to the builder
    // changes every benchmark corpus and its data_version, so it shows here first.
    const corpus = createCorpus(1, 2000, await loadTopics(join(ROOT, 'fixtures/openalex/topics.json')));
    const hash = createHash('sha256');
    for (let i = 0; i < 2000; i++) {
      const opts = { version: i % 7 === 0 ? 1 : 0, updatedDay: '2025-11-02', firstDay: '2025-10-01' };
      hash.update(`${buildWork(corpus, i, opts)}\n`);
    }
    expect(hash.digest('hex')).toBe('c47edb94ac860590dca7c77c2b965e24613b558085ebd645069a1145c78f18e5');
  });
});

describe('planCorpus', () => {
  it('spreads works over 10-30 partitions, parts of at most 50k, ~2% re-appearances', () => {
    const plan = planCorpus(1_000_000, 1);
    expect(plan.days.length).toBeGreaterThanOrEqual(10);
    expect(plan.days.length).toBeLessThanOrEqual(30);
    expect(plan.partitionSizes.reduce((a, b) => a + b, 0)).toBe(1_000_000);
    for (const part of plan.parts) {
      expect(part.path).toMatch(PART_PATH);
      expect(part.end - part.start + part.updates.length).toBeLessThanOrEqual(50_000);
    }
    const updates = plan.lines - plan.works;
    expect(updates / plan.works).toBeGreaterThan(0.01);
    expect(updates / plan.works).toBeLessThan(0.025);
    expect(new Set(plan.parts.map((p) => p.path)).size).toBe(plan.parts.length);
  });
});

describe('generateCorpus (2,000 works)', () => {
  let dirA: string;
  let dirB: string;
  let works: Array<{ file: string; line: string; work: Work }>;

  beforeAll(async () => {
    dirA = await tempDir();
    dirB = await tempDir();
    await generateCorpus({ works: 2000, seed: 1, outDir: dirA, topicsPath: TOPICS });
    await generateCorpus({ works: 2000, seed: 1, outDir: dirB, topicsPath: TOPICS });
    works = await readWorks(dirA);
  });

  it('same seed gives the same bytes', async () => {
    const a = await hashes(dirA);
    expect(Object.keys(a).length).toBeGreaterThan(1);
    expect(await hashes(dirB)).toEqual(a);
  });

  it('a different seed gives different bytes', async () => {
    const dirC = await tempDir();
    await generateCorpus({ works: 2000, seed: 2, outDir: dirC, topicsPath: TOPICS });
    const a = await hashes(dirA);
    const c = await hashes(dirC);
    expect(Object.values(c)).not.toEqual(Object.values(a));
  });

  it('uses the OpenAlex snapshot layout', async () => {
    const files = await listFiles(dirA);
    for (const f of files) expect(f).toMatch(PART_PATH);
    const partitions = new Set(files.map((f) => f.split('/')[1]));
    expect(partitions.size).toBeGreaterThanOrEqual(10);
  });

  it('writes full records with the real key set and order', () => {
    const expected = WORK_KEYS.filter((k) => k !== 'content_urls');
    let withContent = 0;
    for (const { work } of works) {
      const keys = Object.keys(work);
      if (keys.includes('content_urls')) withContent++;
      expect(keys.filter((k) => k !== 'content_urls')).toEqual(expected);
      expect(keys).toEqual(WORK_KEYS.filter((k) => keys.includes(k)));
      expect(work.id).toMatch(/^https:\/\/openalex\.org\/W\d+$/);
      expect(work.updated_date).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}$/);
    }
    expect(withContent).toBeGreaterThan(0);
    const avg = works.reduce((s, w) => s + Buffer.byteLength(w.line), 0) / works.length;
    expect(avg).toBeGreaterThan(12_000);
    expect(avg).toBeLessThan(16_000);
  });

  it('has unique ids within a partition and the partition date in updated_date', () => {
    const byPartition = new Map<string, Set<string>>();
    for (const { file, work } of works) {
      const day = file.split('/')[1]!.slice('updated_date='.length);
      expect(work.updated_date.slice(0, 10)).toBe(day);
      const ids = byPartition.get(day) ?? new Set<string>();
      expect(ids.has(work.id)).toBe(false);
      ids.add(work.id);
      byPartition.set(day, ids);
    }
  });

  it('re-publishes some works later with a newer updated_date and more citations', () => {
    const seen = new Map<string, Work>();
    let again = 0;
    for (const { work } of [...works].sort((a, b) =>
      a.work.updated_date.localeCompare(b.work.updated_date),
    )) {
      const first = seen.get(work.id);
      if (first) {
        again++;
        expect(work.updated_date > first.updated_date).toBe(true);
        expect(work.cited_by_count).toBeGreaterThan(first.cited_by_count);
        expect(work.title).toBe(first.title);
      } else seen.set(work.id, work);
    }
    expect(seen.size).toBe(2000);
    expect(again).toBeGreaterThan(10);
    expect(again).toBeLessThan(100);
  });

  it('has plausible values: topics, keywords, citations, references', () => {
    let paratext = 0;
    let nullDoi = 0;
    const ids = new Set(works.map((w) => w.work.id));
    let internalRefs = 0;
    let refs = 0;
    for (const { work, line } of works) {
      expect(line).not.toMatch(/[:,[](NaN|undefined|-?Infinity)[,}\]]/);
      const w = work as unknown as WorkFields;
      if (w.is_paratext) paratext++;
      if (w.doi === null) nullDoi++;
      else expect(w.doi).toMatch(/^https:\/\/doi\.org\/10\.\d{4,5}\/.+/);
      const year = w.publication_year;
      expect(year).toBeGreaterThanOrEqual(2000);
      expect(year).toBeLessThanOrEqual(2026);
      const topics = w.topics;
      if (!w.is_paratext) {
        expect(topics.length).toBeGreaterThanOrEqual(1);
        expect(topics.length).toBeLessThanOrEqual(3);
        expect(w.primary_topic?.id).toBe(topics[0]!.id);
        expect(topics[0]!.score).toBeGreaterThanOrEqual(0.9);
        const keywords = w.keywords;
        expect(keywords.length).toBeGreaterThanOrEqual(3);
        expect(keywords.length).toBeLessThanOrEqual(15);
        for (const k of keywords) {
          expect(k.id).toMatch(/^https:\/\/openalex\.org\/keywords\/[a-z0-9-]+$/);
          expect(k.score).toBeGreaterThanOrEqual(0.2);
          expect(k.score).toBeLessThanOrEqual(0.9);
        }
      }
      const counts = w.counts_by_year;
      const sum = counts.reduce((s, c) => s + c.cited_by_count, 0);
      if (year >= 2012) expect(sum).toBe(w.cited_by_count);
      else expect(sum).toBeLessThanOrEqual(w.cited_by_count);
      for (const c of counts) expect(c.year).toBeGreaterThanOrEqual(year);
      const referenced = w.referenced_works;
      expect(w.referenced_works_count).toBe(referenced.length);
      refs += referenced.length;
      for (const r of referenced) if (ids.has(r)) internalRefs++;
    }
    expect(paratext).toBeLessThan(works.length * 0.03);
    expect(nullDoi).toBeGreaterThan(0);
    expect(internalRefs).toBeGreaterThan(refs * 0.1);
  });

  it('skews title elements: a few elements dominate, many appear', () => {
    const counts = new Map<string, number>();
    const names = TITLE_ELEMENTS.map((e) => ({ symbol: e.symbol, re: new RegExp(`\\b${e.lower}\\b`, 'i') }));
    let none = 0;
    for (const { work } of works) {
      let found = false;
      for (const { symbol, re } of names) {
        if (re.test(work.title)) {
          counts.set(symbol, (counts.get(symbol) ?? 0) + 1);
          found = true;
        }
      }
      for (const m of work.title.matchAll(/\b(?:[A-Z][a-z]?\d*(?:\.\d+)?){2,}\b/g)) {
        for (const s of m[0].matchAll(/[A-Z][a-z]?/g)) {
          if (TITLE_ELEMENTS.some((e) => e.symbol === s[0])) {
            counts.set(s[0], (counts.get(s[0]) ?? 0) + 1);
            found = true;
          }
        }
      }
      if (!found) none++;
    }
    const sorted = [...counts.values()].sort((a, b) => b - a);
    const total = sorted.reduce((a, b) => a + b, 0);
    const top10 = sorted.slice(0, 10).reduce((a, b) => a + b, 0);
    expect(counts.size).toBeGreaterThan(40);
    expect(top10 / total).toBeGreaterThan(0.5);
    expect(none / works.length).toBeGreaterThan(0.15);
    expect(none / works.length).toBeLessThan(0.55);
  });
});

describe('ri generate', () => {
  it('rejects bad arguments with a usage error', async () => {
    await expect(run(['--out', '/tmp/x'])).rejects.toThrow(CliError);
    await expect(run(['--works', 'abc', '--out', '/tmp/x'])).rejects.toThrow(/--works/);
    await expect(run(['--works', '10'])).rejects.toThrow(/--out/);
    await expect(run(['--works', '10', '--out', '/tmp/x', '--bogus'])).rejects.toThrow(CliError);
  });

  it('runs from dist with workers and gives the same bytes as in-process generation', async () => {
    const main = join(ROOT, 'dist/cli/main.js');
    if (!existsSync(join(ROOT, 'dist/synthetic/generate-worker.js'))) {
      await promisify(execFile)('npx', ['tsc', '-p', 'tsconfig.build.json'], { cwd: ROOT });
    }
    const out = await tempDir();
    const { stderr } = await promisify(execFile)(
      process.execPath,
      [main, 'generate', '--works', '500', '--seed', '3', '--out', out, '--topics', TOPICS],
      { cwd: ROOT },
    );
    expect(stderr).toMatch(/500 works/);
    const files = await listFiles(out);
    expect(files.length).toBeGreaterThanOrEqual(10);
    const local = await tempDir();
    await generateCorpus({ works: 500, seed: 3, outDir: local, topicsPath: TOPICS, workers: 0 });
    expect(await hashes(out)).toEqual(await hashes(local));
    // a non-empty output folder is refused (exit code 2)
    const again = await promisify(execFile)(
      process.execPath,
      [main, 'generate', '--works', '5', '--out', out, '--topics', TOPICS],
      {
        cwd: ROOT,
      },
    ).catch((e: { code: number; stderr: string }) => e);
    expect((again as { code: number }).code).toBe(2);
  }, 120_000);
});
