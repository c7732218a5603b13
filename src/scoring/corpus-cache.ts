import { createHash } from 'node:crypto';
import { closeSync, fstatSync, mkdirSync, openSync, readdirSync, readSync, rmSync } from 'node:fs';
import { open, rename } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { SERVICE_VERSION } from '../config/paths.js';
import { ELEMENTS } from '../elements/elements.js';
import type { StoreState } from '../ingest/corpus-store.js';
import { PAPER_RECORD_RULES } from '../ingest/paper-record.js';
import { TAGGER_VERSION } from '../tagging/tagger.js';
import type { CachedCorpus, Corpus } from './corpus.js';
import type { ScoringParameters } from './parameters.js';

/**
 * The build cache (DATA_DIR/build-cache/corpus.bin): what the last build read from the corpus
 * store and parsed, per paper, in its ordinal order: work ids, headline elements, topics and
 * keywords (not the references: the build reads them from the store, never all in memory). The
 * next build takes it, asks the store only for the works changed since (the store's change log),
 * and re-numbers the rest (src/scoring/corpus.ts), so a day's partition does not re-read and
 * re-join the whole corpus. What it reuses is exactly what a full load would compute, so the
 * snapshot (and its data_version) is the same byte for byte.
 *
 * A cache is used only when its key matches (format, the service's version, the element table,
 * the store's id, tagger version, the parameters that choose headline topics and keywords), the store's change log covers every
 * generation since it, and its bytes hash to the digest in its header. It is written to a
 * temporary file, fsynced and renamed, so a build killed half way leaves the old cache or the
 * new one, never part of one. Anything else, and the build loads the corpus in full.
 */
const MAGIC = 'ri-corpus-cache\n';
// 2: without the references (a cache of format 1 is not used: the build loads in full once).
const FORMAT = 2;

interface Header {
  format: number;
  storeId: string;
  generation: number;
  key: string;
  n: number;
  sections: { name: string; bytes: number }[];
  strings: { topicIds: number[]; keywordSlugs: string[] };
  sha256: string;
}

/** What, besides the store's content, the cached columns depend on. */
function cacheKey(params: ScoringParameters): string {
  return JSON.stringify({
    // Another release may load differently: its first build loads in full.
    service: SERVICE_VERSION,
    elements: ELEMENTS.map((e) => e.symbol).join(','),
    tagger: TAGGER_VERSION,
    // Which versions of a work are in the corpus, and the paper rows' texts.
    paperRecords: PAPER_RECORD_RULES,
    topicScoreThreshold: params.topicScoreThreshold,
    keywordScoreThreshold: params.keywordScoreThreshold,
  });
}

const SECTIONS = [
  'workId',
  'elements.start',
  'elements.values',
  'topics.start',
  'topics.values',
  'keywords.start',
  'keywords.values',
] as const;

function arraysOf(c: Corpus | CachedCorpus): ArrayBufferView[] {
  return [
    c.workId,
    c.elements.start,
    c.elements.values,
    c.topics.start,
    c.topics.values,
    c.keywords.start,
    c.keywords.values,
  ];
}

const pad8 = (n: number) => (8 - (n % 8)) % 8;
const bytesOf = (a: ArrayBufferView) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);

/**
 * Writes the cache of a loaded corpus, atomically. The digest is made here; the writes, fsyncs
 * and rename run on the I/O threads, so the caller can go on (the build hashes its snapshot meanwhile).
 */
export async function writeCorpusCache(
  file: string,
  corpus: Corpus,
  state: StoreState,
  params: ScoringParameters,
): Promise<string> {
  const dir = dirname(file);
  mkdirSync(dir, { recursive: true });
  removeStaleTemporaries(dir, basename(file));
  const arrays = arraysOf(corpus);
  const hash = createHash('sha256');
  const zeros = Buffer.alloc(8);
  for (const a of arrays) {
    hash.update(bytesOf(a));
    hash.update(zeros.subarray(0, pad8(a.byteLength)));
  }
  const strings = { topicIds: corpus.topicIds, keywordSlugs: corpus.keywordSlugs };
  hash.update(JSON.stringify(strings));
  const header: Header = {
    format: FORMAT,
    storeId: state.storeId,
    generation: state.generation,
    key: cacheKey(params),
    n: corpus.n,
    sections: arrays.map((a, i) => ({ name: SECTIONS[i]!, bytes: a.byteLength })),
    strings,
    sha256: hash.digest('hex'),
  };
  const head = Buffer.from(JSON.stringify(header));
  const prefix = Buffer.alloc(MAGIC.length + 4);
  prefix.write(MAGIC, 0, 'latin1');
  prefix.writeUInt32LE(head.length, MAGIC.length);
  const parts: Uint8Array[] = [prefix, head, zeros.subarray(0, pad8(prefix.length + head.length))];
  for (const a of arrays) parts.push(bytesOf(a), zeros.subarray(0, pad8(a.byteLength)));
  const tmp = join(dir, `.${basename(file)}-${process.pid}-${Date.now()}`);
  const fh = await open(tmp, 'w');
  try {
    for (const part of parts)
      for (let off = 0; off < part.length; )
        off += (await fh.write(part, off, part.length - off)).bytesWritten;
    await fh.sync();
  } catch (e) {
    await fh.close();
    rmSync(tmp, { force: true });
    throw e;
  }
  await fh.close();
  await rename(tmp, file);
  const dh = await open(dir, 'r');
  try {
    await dh.sync();
  } finally {
    await dh.close();
  }
  return header.sha256;
}

/** Temporary files of builds whose process is gone (killed half way). */
function removeStaleTemporaries(dir: string, name: string): void {
  for (const f of readdirSync(dir)) {
    const m = new RegExp(`^\\.${name.replace(/\./g, '\\.')}-(\\d+)-\\d+$`).exec(f);
    if (!m) continue;
    const pid = Number(m[1]);
    let alive = pid === process.pid;
    if (!alive) {
      try {
        process.kill(pid, 0);
        alive = true;
      } catch {
        alive = false;
      }
    }
    if (!alive) rmSync(join(dir, f), { force: true });
  }
}

/**
 * The cache, when it can bring this store up to date: else null and why (the build then loads in
 * full). Never throws on a damaged file.
 */
export function readCorpusCache(
  file: string,
  state: StoreState,
  params: ScoringParameters,
): { cache: CachedCorpus | null; reason: string } {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch {
    return { cache: null, reason: 'no build cache' };
  }
  try {
    const size = fstatSync(fd).size;
    /** Reads `length` bytes at `position` into a fresh buffer (each section its own, aligned). */
    const readAt = (position: number, length: number): Uint8Array | null => {
      if (position + length > size) return null;
      const out = new Uint8Array(new ArrayBuffer(length));
      for (let done = 0; done < length; ) {
        const got = readSync(fd, out, done, length - done, position + done);
        if (got === 0) return null;
        done += got;
      }
      return out;
    };
    const headStart = MAGIC.length + 4;
    const prefix = readAt(0, headStart);
    if (!prefix || Buffer.from(prefix).toString('latin1', 0, MAGIC.length) !== MAGIC)
      return { cache: null, reason: 'the build cache is not one' };
    const headLength = Buffer.from(prefix).readUInt32LE(MAGIC.length);
    const head = readAt(headStart, headLength);
    if (!head) return { cache: null, reason: 'the build cache is truncated' };
    const header = JSON.parse(Buffer.from(head).toString('utf8')) as Header;
    if (header.format !== FORMAT) return { cache: null, reason: 'the build cache has another format' };
    if (header.storeId !== state.storeId)
      return { cache: null, reason: 'the build cache is of another corpus store' };
    if (header.key !== cacheKey(params))
      return { cache: null, reason: 'the build cache is of another tagger or other parameters' };
    if (header.generation > state.generation || header.generation < state.loggedAfter)
      return {
        cache: null,
        reason: `the build cache (generation ${header.generation}) is not covered by the change log (${state.loggedAfter}..${state.generation})`,
      };
    let off = headStart + headLength;
    off += pad8(off);
    const hash = createHash('sha256');
    const sections: Uint8Array[] = [];
    for (const s of header.sections) {
      const total = s.bytes + pad8(s.bytes);
      const bytes = readAt(off, total);
      if (!bytes) return { cache: null, reason: 'the build cache is truncated' };
      hash.update(bytes);
      sections.push(bytes);
      off += total;
    }
    hash.update(JSON.stringify(header.strings));
    if (off !== size || hash.digest('hex') !== header.sha256)
      return { cache: null, reason: 'the build cache is damaged (its digest does not match)' };
    const view = <T>(
      i: number,
      Kind: { new (b: ArrayBuffer, offset: number, length: number): T; BYTES_PER_ELEMENT: number },
    ) => new Kind(sections[i]!.buffer as ArrayBuffer, 0, header.sections[i]!.bytes / Kind.BYTES_PER_ELEMENT);
    const n = header.n;
    const cache: CachedCorpus = {
      generation: header.generation,
      digest: header.sha256,
      n,
      workId: view(0, Float64Array),
      elements: { start: view(1, Int32Array), values: view(2, Int32Array) },
      topics: { start: view(3, Int32Array), values: view(4, Int32Array) },
      topicIds: header.strings.topicIds,
      keywords: { start: view(5, Int32Array), values: view(6, Int32Array) },
      keywordSlugs: header.strings.keywordSlugs,
    };
    for (const csr of [cache.elements, cache.topics, cache.keywords]) {
      if (csr.start.length !== n + 1 || csr.start[n] !== csr.values.length)
        return { cache: null, reason: 'the build cache is inconsistent' };
    }
    if (cache.workId.length !== n) return { cache: null, reason: 'the build cache is inconsistent' };
    return { cache, reason: `build cache of generation ${header.generation}` };
  } catch (e) {
    return { cache: null, reason: `the build cache cannot be read (${(e as Error).message})` };
  } finally {
    closeSync(fd);
  }
}
