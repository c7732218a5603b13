/**
 * Synthetic OpenAlex work records. Pure: everything is derived from (seed, work index, version), so a
 * record's bytes do not depend on which part file or worker produces it.
 *
 * Records are written as UTF-8 JSON straight into bytes (ByteWriter): pre-encoded fragments (topics,
 * keywords, concepts, sources, institutions) are copied and numbers printed digit by digit, with no
 * intermediate strings to build, join and collect. Parts drawn before their place in the key order
 * comes are written to a scratch writer and pasted in. The top-level key order is the one of real
 * OpenAlex works (2025 snapshot).
 */
import { ELEMENTS } from '../elements/elements.js';
import { ByteWriter, utf8 } from './byte-writer.js';
import type { Institution } from './pools.js';
import * as pools from './pools.js';
import { hashString, mix, Rng, WeightedSampler, zipfSampler } from './random.js';

// Module-local copies of the pools. An imported binding is checked on every read (it could still be
// uninitialised), and the record builder reads these many times per record: read through the
// imports, 100k works took 1.03-1.16x the CPU of the same code with the tables in this file;
// through these constants 1.00-1.05x (three batches of alternating runs, load 2-7 on 2 cores).
const {
  ADJECTIVES,
  ANIONS,
  BOOKS,
  CONTEXTS,
  conceptPrefix,
  ELEMENT_RANKING,
  FIELD_BOOST,
  FIRST_NAMES,
  FUNDERS,
  GENERIC_CONCEPTS,
  INSTITUTION_POOL,
  INSTITUTION_SAMPLER,
  JOURNAL_SAMPLER,
  JOURNALS,
  LANG_SAMPLER,
  LANGS,
  LAST_NAMES,
  LICENSES,
  MESH,
  MESH_QUALIFIERS,
  METHODS,
  NONMETAL_PHRASES,
  OA,
  OA_SAMPLER,
  OA_STATUS,
  PREPRINT_SERVERS,
  REPOSITORIES,
  SDG_SAMPLER,
  SDGS,
  STRATEGIES,
  TYPE_SAMPLER,
  TYPES,
  VERSIONS,
} = pools;

/** One topic of the OpenAlex taxonomy, as in topics.json. */
export interface TopicInput {
  id: string;
  display_name: string;
  keywords?: string[];
  subfield: { id: string; display_name: string };
  field: { id: string; display_name: string };
  domain: { id: string; display_name: string };
}

const FIRST_YEAR = 2000;
const LAST_YEAR = 2026;
/** Last complete citation year (the corpus is "as of" late 2025 / early 2026). */
const CITATION_YEAR = 2025;
/** counts_by_year covers this many years, like OpenAlex (2012..2025 in the 2025 snapshot). */
const COUNTS_WINDOW_START = 2012;
const YEAR_STRIDE = 32;

const J = JSON.stringify;
/** Float32-rounded score printed the way OpenAlex prints it (0.9491999745368958). */
const f32 = (x: number): number => Math.fround(x);
const SCORE_STEPS = 100_000;
/**
 * Float32 scores on a 1e-5 grid, each printed once (on first use) and then looked up: printing doubles is
 * slow. As text for the few scores still built into strings, as bytes (a fixed slot per grid point) for
 * the writer.
 */
const SCORE_TEXT: string[] = new Array<string>(SCORE_STEPS + 1);
const SCORE_SLOT = 32;
const SCORE_BYTES = new Uint8Array((SCORE_STEPS + 1) * SCORE_SLOT);
const SCORE_LENGTH = new Uint8Array(SCORE_STEPS + 1);
function scoreStep(x: number): number {
  return Math.round(Math.min(1, Math.max(0, x)) * SCORE_STEPS);
}
function scoreText(x: number): string {
  const k = scoreStep(x);
  // biome-ignore lint/suspicious/noAssignInExpressions: fill on first use
  return (SCORE_TEXT[k] ??= String(f32(k / SCORE_STEPS)));
}
function writeScore(w: ByteWriter, x: number): void {
  const k = scoreStep(x);
  let n = SCORE_LENGTH[k]!;
  const at = k * SCORE_SLOT;
  if (n === 0) {
    const text = scoreText(x);
    n = text.length;
    for (let i = 0; i < n; i++) SCORE_BYTES[at + i] = text.charCodeAt(i);
    SCORE_LENGTH[k] = n;
  }
  w.reserve(n);
  const b = w.bytes;
  let p = w.length;
  for (let i = 0; i < n; i++) b[p++] = SCORE_BYTES[at + i]!;
  w.length = p;
}

// ---------------------------------------------------------------------------------------------
// Elements and titles
// ---------------------------------------------------------------------------------------------

interface TitleElement {
  symbol: string;
  name: string;
  lower: string;
  number: number;
}

export const TITLE_ELEMENTS: readonly TitleElement[] = (() => {
  const bySymbol = new Map(ELEMENTS.map((e) => [e.symbol, e]));
  const order = ELEMENT_RANKING.filter((s) => bySymbol.has(s));
  for (const e of ELEMENTS) if (!order.includes(e.symbol)) order.push(e.symbol);
  return order.map((s) => {
    const e = bySymbol.get(s)!;
    const name = s === 'Al' ? 'Aluminum' : s === 'S' ? 'Sulfur' : s === 'Cs' ? 'Cesium' : e.name;
    return { symbol: s, name, lower: name.toLowerCase(), number: e.number };
  });
})();
/** Zipf over the ranking: O, C, H, N, Fe dominate; superheavy elements appear a few times per million. */
const ELEMENT_SAMPLER = zipfSampler(TITLE_ELEMENTS.length, 1.25, 1.5);

const METAL_FORMS: Array<(e: TitleElement, p: TitleElement, r: Rng) => string> = [
  (e) => `${e.lower}`,
  (e) => `${e.lower}-based catalysts`,
  (e, _p, r) => `${e.lower} ${r.pick(ANIONS)}`,
  (e, _p, r) => `${e.lower} ${r.pick(ANIONS)}`,
  (e, _p, r) => `${e.symbol}${r.pick(['O', 'O2', '2O3', '3O4', 'O3'])}`,
  (e, _p, r) => `${e.symbol}${r.pick(['S2', 'Se2', 'Te2', 'P', 'N', '2C'])}`,
  (e) => `Li${e.symbol}PO4`,
  (e, p) => `${e.symbol}${p.symbol}-LDH`,
  (e, p) => `${e.symbol}0.5${p.symbol}0.5TiO3`,
  (e, p) => `${e.symbol}-doped ${p.symbol}O2`,
  (e) => `${e.symbol}-N-C single-atom catalysts`,
  (e, p) => `${e.symbol}${p.symbol} alloy nanoparticles`,
  (e) => `${e.name} isotopes`,
  (e, p) => `${p.lower}-doped ${e.lower} oxide`,
];
const HEAVY_FORMS: Array<(e: TitleElement) => string> = [
  (e) => `element ${e.number} (${e.lower})`,
  (e) => `superheavy element ${e.lower}`,
  (e) => `${e.lower} isotopes`,
  (e) => `the chemistry of ${e.lower}`,
];
const ACTINIDE_FORMS: Array<(e: TitleElement) => string> = [
  (e) => `${e.lower} complexes`,
  (e) => `${e.symbol}(IV) oxide`,
  (e) => `${e.lower}-bearing waste forms`,
  (e) => `${e.lower} separation`,
];

function elementPhrase(r: Rng): string {
  const e = TITLE_ELEMENTS[ELEMENT_SAMPLER.sample(r)]!;
  const special = NONMETAL_PHRASES[e.symbol];
  if (special) return r.pick(special);
  if (e.number > 100) return r.pick(HEAVY_FORMS)(e);
  if (e.number >= 89) return r.pick(ACTINIDE_FORMS)(e);
  let p = TITLE_ELEMENTS[ELEMENT_SAMPLER.sample(r)]!;
  if (p === e || NONMETAL_PHRASES[p.symbol] || p.number > 88) p = TITLE_ELEMENTS[4 + (r.nextU32() % 20)]!;
  if (p === e) p = TITLE_ELEMENTS[e.symbol === 'Ni' ? 4 : 5]!;
  return r.pick(METAL_FORMS)(e, p, r);
}

type TitleParts = { e: string; e2: string; k: string; k2: string; f: string; r: Rng };
const ELEMENT_TEMPLATES: Array<(t: TitleParts) => string> = [
  ({ e, k }) => `${cap(e)} for ${k}`,
  ({ e, k }) => `Synthesis and characterization of ${e} for ${k}`,
  ({ e, k }) => `${cap(e)} as a highly efficient catalyst for ${k}`,
  ({ e, k, r }) => `Enhanced ${k} of ${e} via ${r.pick(STRATEGIES)}`,
  ({ e, k, r }) => `Role of ${e} in ${k}: insights from ${r.pick(METHODS)}`,
  ({ e, k, k2 }) => `${cap(e)}-based materials for ${k} and ${k2}`,
  ({ e, k, r }) => `Tuning ${k} in ${e} by ${r.pick(STRATEGIES)}`,
  ({ e, k, r }) => `In situ ${r.pick(METHODS)} study of ${e} during ${k}`,
  ({ e, k, r }) => `${cap(k)} using ${e}: a ${r.pick(ADJECTIVES)} approach`,
  ({ e, k, k2 }) => `Effect of ${e} on ${k} in ${k2}`,
  ({ e, e2, k }) => `${cap(e)} and ${e2} for ${k}`,
  ({ e, e2, k, r }) => `${cap(e)} coupled with ${e2} boosts ${k} under ${r.pick(CONTEXTS)}`,
  ({ e, k, r }) => `${cap(k)} of ${e} in ${r.pick(CONTEXTS)}`,
  ({ e, f }) => `Recent advances in ${e} for ${f.toLowerCase()}`,
];
const PLAIN_TEMPLATES: Array<(t: TitleParts) => string> = [
  ({ k, k2 }) => `${cap(k)} and ${k2}: a review`,
  ({ k, f, r }) => `A ${r.pick(ADJECTIVES)} framework for ${k} in ${f.toLowerCase()}`,
  ({ k }) => `${cap(k)}: recent advances and future perspectives`,
  ({ k }) => `Machine learning prediction of ${k}`,
  ({ k, k2 }) => `On the ${k} of ${k2}`,
  ({ k, r }) => `Understanding ${k} through ${r.pick(METHODS)}`,
  ({ k, r }) => `${cap(k)} in ${r.pick(CONTEXTS)}: evidence from a long-term study`,
  ({ k, k2, r }) => `${cap(k)} and ${k2} revisited with ${r.pick(METHODS)}`,
  ({ k, k2 }) => `Linking ${k} to ${k2}`,
  ({ k, f }) => `${cap(k)} in ${f.toLowerCase()}: challenges and opportunities`,
];

function cap(s: string): string {
  return s.length === 0 ? s : s[0]!.toUpperCase() + s.slice(1);
}

/** Keyword text as it reads inside a sentence-case title (acronyms and formulas kept). */
function inTitle(keyword: string): string {
  return keyword
    .split(' ')
    .map((w) => (/[A-Z].*[A-Z0-9]/.test(w.slice(1)) || /^[A-Z0-9-]+$/.test(w) ? w : w.toLowerCase()))
    .join(' ');
}

function toTitleCase(s: string): string {
  return s.replace(/\b([a-z])([a-z]{3,})/g, (_m, a: string, b: string) => a.toUpperCase() + b);
}

// ---------------------------------------------------------------------------------------------
// Topics, keywords, concepts
// ---------------------------------------------------------------------------------------------

interface Topic {
  /** `{"id":...,"display_name":...,"score":`, UTF-8 */
  prefix: Uint8Array;
  /** `,"subfield":...,"field":...,"domain":...}`, UTF-8 */
  suffix: Uint8Array;
  fieldName: string;
  subfieldIndex: number;
  fieldIndex: number;
  /** Title-ready keyword phrases. */
  phrases: string[];
  /** Keyword/concept entries, built lazily. */
  vocab?: VocabularyEntry[];
  /** The topic's OpenAlex keywords (may be empty) and subfield name: the source of its vocabulary. */
  keywords: readonly string[];
  subfieldName: string;
}

/** One name of a topic's vocabulary, as a keyword and as a concept (JSON up to the score, UTF-8). */
interface VocabularyEntry {
  slug: string;
  keyword: Uint8Array;
  concept: Uint8Array;
}

function slug(s: string): string {
  return s
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
}

/**
 * Entries by name: many topics share a keyword, and every topic of a subfield its subfield and field
 * names. One object per name also lets a record tell repeated keywords apart by identity.
 */
const VOCABULARY = new Map<string, VocabularyEntry>();

function vocabularyEntry(name: string): VocabularyEntry {
  let entry = VOCABULARY.get(name);
  if (!entry) {
    const s = slug(name);
    entry = {
      slug: s,
      keyword: utf8(`{"id":"${OA}keywords/${s}","display_name":${J(name)},"score":`),
      concept: utf8(conceptPrefix(name, 1 + (hashString(s) % 4))),
    };
    VOCABULARY.set(name, entry);
  }
  return entry;
}

function topicVocab(t: Topic): VocabularyEntry[] {
  if (t.vocab) return t.vocab;
  const seen = new Set<string>();
  const vocab: VocabularyEntry[] = [];
  for (const name of [...t.keywords, t.subfieldName, t.fieldName]) {
    const entry = vocabularyEntry(name);
    if (!entry.slug || seen.has(entry.slug)) continue;
    seen.add(entry.slug);
    vocab.push(entry);
  }
  t.vocab = vocab;
  return vocab;
}

// ---------------------------------------------------------------------------------------------
// The corpus
// ---------------------------------------------------------------------------------------------

export interface Corpus {
  seed: number;
  works: number;
  topics: Topic[];
  /** Topic index (into `topics`) of each work's primary topic. */
  topicOf: Uint16Array;
  /** Publication year - FIRST_YEAR of each work. */
  yearOf: Uint8Array;
  /** Works sorted by (topic, year); `keyStart[topic*32+year]` is where that bucket starts. */
  byTopicYear: Int32Array;
  keyStart: Int32Array;
  /** Popularity of each topic (unnormalised), and the sampler drawing from it. */
  topicWeights: Float64Array;
  topicSampler: WeightedSampler;
  /** Topic indices per subfield / field, for secondary topics. */
  subfieldTopics: number[][];
  fieldTopics: number[][];
  idOffset: number;
}

/** Relative number of works per publication year: growth toward recent years, few (in-press) 2026. */
function yearWeights(): number[] {
  const w: number[] = [];
  for (let y = FIRST_YEAR; y <= LAST_YEAR; y++)
    w.push(y === LAST_YEAR ? 0.9 : Math.exp(0.085 * (y - FIRST_YEAR)));
  return w;
}

/** Salts for the independent random streams derived from (seed, index). */
const SALT_TOPIC = 11;
const SALT_YEAR = 12;
const SALT_RECORD = 13;
const SALT_VERSION = 14;
const SALT_RANK = 15;

export function createCorpus(seed: number, works: number, topicInputs: readonly TopicInput[]): Corpus {
  if (topicInputs.length === 0) throw new Error('the topic table is empty');
  if (topicInputs.length > 65535) throw new Error('too many topics');
  const subfieldIds = new Map<string, number>();
  const fieldIds = new Map<string, number>();
  const topics: Topic[] = topicInputs.map((t) => {
    if (!subfieldIds.has(t.subfield.id)) subfieldIds.set(t.subfield.id, subfieldIds.size);
    if (!fieldIds.has(t.field.id)) fieldIds.set(t.field.id, fieldIds.size);
    const phrases = (t.keywords?.length ? t.keywords : [t.display_name]).map(inTitle);
    return {
      prefix: utf8(`{"id":${J(t.id)},"display_name":${J(t.display_name)},"score":`),
      suffix: utf8(
        `,"subfield":${J({ id: t.subfield.id, display_name: t.subfield.display_name })},"field":${J({
          id: t.field.id,
          display_name: t.field.display_name,
        })},"domain":${J({ id: t.domain.id, display_name: t.domain.display_name })}}`,
      ),
      fieldName: t.field.display_name,
      subfieldIndex: subfieldIds.get(t.subfield.id)!,
      fieldIndex: fieldIds.get(t.field.id)!,
      phrases,
      keywords: t.keywords ?? [],
      subfieldName: t.subfield.display_name,
    };
  });
  const subfieldTopics: number[][] = Array.from({ length: subfieldIds.size }, () => []);
  const fieldTopics: number[][] = Array.from({ length: fieldIds.size }, () => []);
  topics.forEach((t, i) => {
    subfieldTopics[t.subfieldIndex]!.push(i);
    fieldTopics[t.fieldIndex]!.push(i);
  });

  // Popularity: chemistry/materials/energy topics first, seeded order within; Zipf over that rank.
  const rankRng = new Rng(mix(seed, SALT_RANK));
  const priority = topics.map((t) => (FIELD_BOOST[t.fieldName] ?? 0.4) * rankRng.next());
  const order = topics.map((_t, i) => i).sort((a, b) => priority[b]! - priority[a]! || a - b);
  const weights = new Float64Array(topics.length);
  order.forEach((topicIndex, rank) => {
    weights[topicIndex] = 1 / (rank + 3) ** 0.95;
  });
  const topicSampler = new WeightedSampler(weights);
  const yearSampler = new WeightedSampler(yearWeights());

  const topicOf = new Uint16Array(shareable(works * 2));
  const yearOf = new Uint8Array(shareable(works));
  const keys = topics.length * YEAR_STRIDE;
  const counts = new Int32Array(keys + 1);
  for (let i = 0; i < works; i++) {
    const t = topicSampler.sampleWith(mix(seed, i, SALT_TOPIC) / 4294967296);
    const y = yearSampler.sampleWith(mix(seed, i, SALT_YEAR) / 4294967296);
    topicOf[i] = t;
    yearOf[i] = y;
    counts[t * YEAR_STRIDE + y + 1]!++;
  }
  const keyStart = new Int32Array(shareable((keys + 1) * 4));
  for (let k = 1; k <= keys; k++) keyStart[k] = keyStart[k - 1]! + counts[k]!;
  const fill = keyStart.slice(0, keys);
  const byTopicYear = new Int32Array(shareable(works * 4));
  for (let i = 0; i < works; i++) byTopicYear[fill[topicOf[i]! * YEAR_STRIDE + yearOf[i]!]!++] = i;

  return {
    seed,
    works,
    topics,
    topicOf,
    yearOf,
    byTopicYear,
    keyStart,
    topicWeights: weights,
    topicSampler,
    subfieldTopics,
    fieldTopics,
    idOffset: mix(seed, 0x1d) % ID_SPACE,
  };
}

/**
 * Memory for the per-work tables: shared, so worker threads read the main thread's tables instead of each
 * building its own copy.
 */
function shareable(bytes: number): SharedArrayBuffer {
  return new SharedArrayBuffer(bytes);
}

/** A corpus as plain data that `postMessage` can carry to a worker thread (the big tables are shared, not copied). */
export type SharedCorpus = Omit<Corpus, 'topicSampler'>;

export function shareCorpus(corpus: Corpus): SharedCorpus {
  const { topicSampler: _sampler, topics, ...rest } = corpus;
  // vocabularies are built lazily where they are used
  return { ...rest, topics: topics.map(({ vocab: _vocab, ...t }) => t) };
}

/** The corpus a worker thread received from `shareCorpus`. */
export function corpusFromShared(shared: SharedCorpus): Corpus {
  return { ...shared, topicSampler: new WeightedSampler(shared.topicWeights) };
}

const ID_SPACE = 900_000_000;
/** Most corpus ids are "W4" + 9 digits: keeping the varying part a small integer makes it cheap to print. */
const WORK_URL = `${OA}W4`;

/**
 * The 9-digit tail of work `index`'s id (OpenAlex id W4<tail>): an affine bijection on [0, 9e8), so ids
 * are unique in the corpus (for up to 9e8 works).
 */
function workIdTail(corpus: Corpus, index: number): number {
  return 100_000_000 + ((index * 1_000_003 + corpus.idOffset) % ID_SPACE);
}

const WORK_URL_BYTES = utf8(`"${WORK_URL}`);
const EXTERNAL_URL_BYTES = utf8(`"${OA}W`);

/** `"https://openalex.org/W4…"` (with the quotes) of work `index`. */
function writeWorkId(w: ByteWriter, corpus: Corpus, index: number): void {
  w.raw(WORK_URL_BYTES);
  w.int(workIdTail(corpus, index));
  w.text('"');
}

/** Quoted id of a work outside the corpus: W1…/W2…/W3… (`digit`), never W4…, so no collision. */
function writeExternalId(w: ByteWriter, digit: number, tail: number): void {
  w.raw(EXTERNAL_URL_BYTES);
  w.int(digit);
  w.int(tail);
  w.text('"');
}

const AUTHOR_URL_BYTES = utf8(`${OA}A5`);

/** The OpenAlex id of author `key` (no quotes). */
function writeAuthorId(w: ByteWriter, key: number): void {
  w.raw(AUTHOR_URL_BYTES);
  w.padded(key % 1000000, 6);
  w.padded((mix(key, 7) % 1000000) % 1000, 3);
}

// ---------------------------------------------------------------------------------------------
// Record builder
// ---------------------------------------------------------------------------------------------

const pad2 = (n: number): string => (n < 10 ? `0${n}` : `${n}`);
const pad6 = (n: number): string => `${n}`.padStart(6, '0');

/** A reusable generator: avoids allocating one per record. */
const rng = new Rng(1);
const rng2 = new Rng(1);

/** Where a record's parts are written before they are pasted into it in key order (one record at a time). */
const scratch = new ByteWriter(1 << 16);
const conceptScratch = new ByteWriter(1 << 14);
const textScratch = new ByteWriter(1 << 16);
const decoder = new TextDecoder();

/** Author names as they read inside a JSON string (`"First Last"`, `"Last, F."`), UTF-8. */
const FIRST_NAME_JSON = FIRST_NAMES.map((n) => utf8(J(n).slice(1, -1)));
const LAST_NAME_JSON = LAST_NAMES.map((n) => utf8(J(n).slice(1, -1)));
const FIRST_INITIAL_JSON = FIRST_NAMES.map((n) => utf8(J(n[0]!).slice(1, -1)));

function score(r: Rng, lo: number, hi: number): number {
  return f32(lo + r.next() * (hi - lo));
}

/** Distribute `total` citations over years first..last with a rise-then-decay profile. */
function citationYears(total: number, first: number, last: number, r: Rng): number[] {
  const n = last - first + 1;
  const out = new Array<number>(n).fill(0);
  if (total <= 0 || n <= 0) return out;
  const peak = 2 + r.next() * 3;
  let sum = 0;
  const w = new Array<number>(n);
  for (let k = 0; k < n; k++) {
    const a = k + 0.6;
    const v = (a / peak) * Math.exp(1 - a / peak) + 0.15;
    w[k] = v;
    sum += v;
  }
  let assigned = 0;
  let best = 0;
  for (let k = 0; k < n; k++) {
    const c = Math.floor((total * w[k]!) / sum);
    out[k] = c;
    assigned += c;
    if (w[k]! > w[best]!) best = k;
  }
  // remainders go to the most-cited years, deterministic
  let rest = total - assigned;
  for (let k = best; rest > 0; k = (k + 1) % n, rest--) out[k]!++;
  return out;
}

export interface BuildOptions {
  /** 0 for the first appearance, 1+ for a later re-appearance (more citations, newer updated_date). */
  version: number;
  /** Partition date YYYY-MM-DD; updated_date is this day at some time. */
  updatedDay: string;
  /** Partition date of the first appearance (created_date never exceeds it). */
  firstDay: string;
}

type Source = (typeof JOURNALS)[number];

/**
 * One record while it is drawn: each step below draws its part (in the order the draws have always
 * been made, which the bytes depend on) and leaves it here, as values or as a range of the scratch
 * writers; `writeRecord` then writes it all in key order. Small steps rather than one long function:
 * V8 compiles a function again whenever a rarely taken branch first runs, and compiling the one long
 * builder took longer than building tens of thousands of records. One draft per thread, reused.
 */
class Draft {
  corpus!: Corpus;
  index = 0;
  opts!: BuildOptions;
  wid = '';
  idNum = 0;
  topicIndex = 0;
  year = 0;
  type = '';
  rawType = '';
  isParatext = false;
  isPreprint = false;
  isChapter = false;
  isRetracted = false;
  pubDate = '';
  source!: Source;
  hasDoi = false;
  doiUrl = '';
  doiSuffix = '';
  doi = '';
  oaStatus = '';
  isOa = false;
  license = '';
  licenseId = '';
  landing = '';
  pdfUrl = '';
  version = '';
  locId = '';
  // locations (scratch)
  primaryStart = 0;
  primaryEnd = 0;
  bestOaStart = -1;
  bestOaEnd = 0;
  locationsEnd = 0;
  repoCopies = 0;
  oaUrl = '';
  // authors (scratch)
  authorsStart = 0;
  authorsEnd = 0;
  // distinct countries and institutions, references, keywords: arrays, not Sets (a few dozen items;
  // a cleared Set gets a new table and grows it again for every record)
  readonly countries: string[] = [];
  readonly institutions: string[] = [];
  readonly correspondingAuthors: number[] = [];
  readonly correspondingInstitutions: Institution[] = [];
  // topics, keywords (scratch), concepts (concept writer)
  readonly topicIdx: number[] = [];
  readonly topicScores: number[] = [];
  topicsStart = 0;
  primaryTopicEnd = 0;
  topicsEnd = 0;
  readonly keywordNames: string[] = [];
  readonly usedKeywords: VocabularyEntry[] = [];
  keywordsStart = 0;
  keywordsEnd = 0;
  titleJson = '';
  // citations
  cited = 0;
  perYear: number[] = [];
  refDraw = 0;
  fwci = '';
  percentile = '';
  pMin = 0;
  pMax = 0;
  // references, related works (scratch)
  /** Work indices; negative: an id outside the corpus. */
  readonly refs: number[] = [];
  relatedStart = 0;
  relatedEnd = 0;
  // the rest
  hasMag = false;
  hasPmid = false;
  pmid = 0;
  indexedIn = '';
  apcList = '';
  apcPaid = '';
  biblio = '';
  mesh = '';
  sdgs = '';
  awards = '';
  funders = '';
  hasPdf = false;
  hasGrobid = false;
  hour = 0;
  minute = 0;
  second = 0;
  micro = 0;
  created = '';
  language = '';
}

const draft = new Draft();

/** Writes the JSON text (no newline) of work `index` to `out`. */
export function writeWork(corpus: Corpus, index: number, opts: BuildOptions, out: ByteWriter): void {
  const d = draft;
  const r = rng.reseed(mix(corpus.seed, index, SALT_RECORD));
  d.corpus = corpus;
  d.index = index;
  d.opts = opts;
  scratch.length = 0;
  conceptScratch.length = 0;
  drawVenue(d, r);
  writeLocations(d, r, scratch);
  writeAuthorships(d, r, scratch);
  writeTopics(d, r, scratch);
  writeKeywords(d, r, scratch, conceptScratch);
  drawTitle(d, r);
  drawCitations(d, r);
  drawReferences(d, r);
  writeRelated(d, r, scratch);
  drawDetails(d, r);
  writeRecord(d, out, scratch, conceptScratch);
}

/** The work's type, dates, venue, DOI and open-access status. */
function drawVenue(d: Draft, r: Rng): void {
  const { corpus, index } = d;
  const idTail = workIdTail(corpus, index);
  d.idNum = 4_000_000_000 + idTail;
  const wid = `W4${idTail}`;
  d.wid = wid;
  d.topicIndex = corpus.topicOf[index]!;
  const year = FIRST_YEAR + corpus.yearOf[index]!;
  d.year = year;
  const [type, , rawType] = TYPES[TYPE_SAMPLER.sample(r)]!;
  d.type = type;
  d.rawType = rawType;
  const isParatext = type === 'paratext';
  const isPreprint = type === 'preprint';
  const isChapter = type === 'book-chapter';
  d.isParatext = isParatext;
  d.isPreprint = isPreprint;
  d.isChapter = isChapter;
  d.isRetracted = !isParatext && r.chance(0.003);

  // dates
  const month = year === LAST_YEAR ? 1 + (r.nextU32() % 9) : 1 + (r.nextU32() % 12);
  const day = r.chance(0.12) ? 1 : 1 + (r.nextU32() % 28);
  d.pubDate = `${year}-${pad2(month)}-${pad2(day)}`;

  // venue
  const source = isPreprint
    ? r.pick(PREPRINT_SERVERS)
    : isChapter
      ? r.pick(BOOKS)
      : JOURNALS[JOURNAL_SAMPLER.sample(r)]!;
  d.source = source;
  const hasDoi = !r.chance(isChapter ? 0.2 : 0.07);
  d.hasDoi = hasDoi;
  let doiSuffix: string;
  if (source.doiPrefix === '48550')
    doiSuffix = `arxiv.${pad2(year % 100)}${pad2(month)}.${pad6(r.nextU32() % 99999).slice(1)}`;
  else if (source.doiPrefix === '1016')
    doiSuffix = isChapter
      ? `b978-0-${r.int(10, 99)}-${r.int(100000, 999999)}-${r.int(1, 9)}.${pad6(r.int(1, 99999)).slice(1)}-${r.int(0, 9)}`
      : `j.${source.abbrev}.${year}.${r.int(100000, 199999)}`;
  else if (source.doiPrefix === '1021')
    doiSuffix = `${source.abbrev}.${year % 10}c${pad6(r.int(0, 19999)).slice(1)}`;
  else if (source.doiPrefix === '3390')
    doiSuffix = `${source.abbrev}${r.int(10, 30)}${pad6(r.int(0, 99999)).slice(1)}`;
  else doiSuffix = `s${r.int(10000, 99999)}-0${pad2(year % 100)}-${r.int(10000, 99999)}-${r.int(0, 9)}`;
  const doiUrl = `https://doi.org/10.${source.doiPrefix}/${doiSuffix}`;
  d.doiUrl = doiUrl;
  d.doi = hasDoi ? `"${doiUrl}"` : 'null';

  // open access
  let oaStatus = source.isOa ? (r.chance(0.8) ? 'gold' : 'diamond') : OA_STATUS[OA_SAMPLER.sample(r)]!;
  if (isPreprint) oaStatus = 'green';
  d.oaStatus = oaStatus;
  const isOa = oaStatus !== 'closed';
  d.isOa = isOa;
  const license = isOa && oaStatus !== 'bronze' && oaStatus !== 'green' ? `"${r.pick(LICENSES)}"` : 'null';
  d.license = license;
  d.licenseId = license === 'null' ? 'null' : `"${OA}licenses/${license.slice(1, -1)}"`;
  const landing = hasDoi ? doiUrl : `https://www.example-publisher.org/article/${wid.toLowerCase()}`;
  d.landing = landing;
  d.pdfUrl = isOa
    ? `"${landing.replace('https://doi.org/', 'https://www.pubs.example.org/doi/pdf/')}"`
    : 'null';
  d.version = isPreprint ? 'submittedVersion' : r.chance(0.9) ? 'publishedVersion' : r.pick(VERSIONS);
  d.locId = hasDoi ? `doi:10.${source.doiPrefix}/${doiSuffix}` : `pmh:${wid.toLowerCase()}`;
}

/** The primary location and the repository copies; the best open-access one among them. */
function writeLocations(d: Draft, r: Rng, w: ByteWriter): void {
  const { oaStatus, pdfUrl, version } = d;
  d.primaryStart = w.length;
  w.text('{"id":"');
  w.text(d.locId);
  w.text('","is_oa":');
  w.bool(oaStatus !== 'closed' && oaStatus !== 'green');
  w.text(',"landing_page_url":"');
  w.text(d.landing);
  w.text('","pdf_url":');
  w.text(oaStatus === 'green' ? 'null' : pdfUrl);
  w.text(',"source":');
  w.raw(d.source.json);
  w.text(',"license":');
  w.text(d.license);
  w.text(',"license_id":');
  w.text(d.licenseId);
  w.text(',"version":"');
  w.text(version);
  w.text('","is_accepted":');
  w.bool(version !== 'submittedVersion');
  w.text(',"is_published":');
  w.bool(version === 'publishedVersion');
  w.text(',"raw_source_name":');
  w.raw(d.source.nameJson);
  w.text(',"raw_type":"');
  w.text(d.rawType);
  w.text('"}');
  d.primaryEnd = w.length;
  d.bestOaStart = d.isOa && oaStatus !== 'green' ? d.primaryStart : -1;
  d.bestOaEnd = d.primaryEnd;
  const repoCopies = oaStatus === 'green' ? 1 + (r.nextU32() % 2) : r.chance(0.25) ? 1 : 0;
  d.repoCopies = repoCopies;
  for (let k = 0; k < repoCopies; k++) {
    const repo = r.pick(REPOSITORIES);
    const rid = r.int(1000000, 9999999);
    w.text(',');
    const start = w.length;
    w.text('{"id":"');
    w.text(repo.oai);
    w.int(rid);
    w.text('","is_oa":true,"landing_page_url":"');
    w.text(repo.url);
    w.int(rid);
    w.text('","pdf_url":"');
    w.text(repo.url);
    w.int(rid);
    w.text('/pdf","source":');
    w.raw(repo.sourceJson);
    w.text(',"license":null,"license_id":null,"version":"');
    w.text(k === 0 ? 'acceptedVersion' : 'submittedVersion');
    w.text('","is_accepted":');
    w.bool(k === 0);
    w.text(',"is_published":false,"raw_source_name":null,"raw_type":"');
    w.text(k === 0 ? 'info:eu-repo/semantics/article' : 'text');
    w.text('"}');
    if (d.bestOaStart < 0) {
      d.bestOaStart = start;
      d.bestOaEnd = w.length;
    }
  }
  d.locationsEnd = w.length;
  d.oaUrl = d.bestOaStart < 0 ? 'null' : pdfUrl === 'null' ? `"${d.landing}"` : pdfUrl;
}

/** Authors: a topic has its own pool of recurring authors (communities). */
function writeAuthorships(d: Draft, r: Rng, w: ByteWriter): void {
  const nAuthors = d.isParatext ? 0 : Math.min(40, 1 + r.powerLaw(4, 2.6) + (r.nextU32() % 3));
  const { countries, institutions, correspondingAuthors, correspondingInstitutions } = d;
  countries.length = 0;
  institutions.length = 0;
  correspondingAuthors.length = 0;
  correspondingInstitutions.length = 0;
  const mainInstitution = INSTITUTION_POOL[INSTITUTION_SAMPLER.sample(r)]!;
  d.authorsStart = w.length;
  for (let a = 0; a < nAuthors; a++) {
    const authorKey = mix(d.topicIndex, r.chance(0.6) ? r.nextU32() % 40 : r.nextU32());
    const firstName = authorKey % FIRST_NAMES.length;
    const lastName = (authorKey >>> 8) % LAST_NAMES.length;
    const inst = r.chance(0.55) ? mainInstitution : INSTITUTION_POOL[INSTITUTION_SAMPLER.sample(r)]!;
    const hasInst = !r.chance(0.06);
    const corresponding = a === nAuthors - 1 || (a === 0 && r.chance(0.3));
    if (corresponding) {
      correspondingAuthors.push(authorKey);
      if (hasInst && !correspondingInstitutions.some((c) => c.id === inst.id))
        correspondingInstitutions.push(inst);
    }
    if (a > 0) w.text(',');
    w.text('{"author_position":"');
    w.text(a === 0 ? 'first' : a === nAuthors - 1 ? 'last' : 'middle');
    w.text('","author":{"id":"');
    writeAuthorId(w, authorKey);
    w.text('","display_name":"');
    w.raw(FIRST_NAME_JSON[firstName]!);
    w.text(' ');
    w.raw(LAST_NAME_JSON[lastName]!);
    w.text('","orcid":');
    if (authorKey % 3 === 0) w.text('null');
    else {
      w.text('"https://orcid.org/0000-000');
      w.int(authorKey % 3);
      w.text('-');
      w.padded(authorKey % 9999, 4);
      w.text('-');
      w.padded(mix(authorKey, 3) % 9999, 4);
      w.text('"');
    }
    w.text(hasInst ? '},"institutions":[' : '},"institutions":[],"countries":[],"is_corresponding":');
    if (hasInst) {
      if (!countries.includes(inst.country)) countries.push(inst.country);
      if (!institutions.includes(inst.id)) institutions.push(inst.id);
      w.raw(inst.json);
      w.text('],"countries":["');
      w.text(inst.country);
      w.text('"],"is_corresponding":');
    }
    w.bool(corresponding);
    w.text(',"raw_author_name":"');
    w.raw(LAST_NAME_JSON[lastName]!);
    w.text(', ');
    w.raw(FIRST_INITIAL_JSON[firstName]!);
    if (hasInst) {
      const raw = inst.raw[authorKey % inst.raw.length]!;
      w.text('.","raw_affiliation_strings":[');
      w.raw(raw);
      w.text('],"affiliations":[{"raw_affiliation_string":');
      w.raw(raw);
      w.text(',"institution_ids":["');
      w.text(inst.id);
      w.text('"]}]}');
    } else w.text('.","raw_affiliation_strings":[],"affiliations":[]}');
  }
  d.authorsEnd = w.length;
}

/** The primary topic and up to two more, mostly of the same subfield or field. */
function writeTopics(d: Draft, r: Rng, w: ByteWriter): void {
  const { corpus, topicIdx, topicScores } = d;
  const topic = corpus.topics[d.topicIndex]!;
  topicIdx.length = 0;
  topicScores.length = 0;
  if (!d.isParatext) {
    topicIdx.push(d.topicIndex);
    topicScores.push(score(r, 0.9, 1.0));
    const nTopics = r.chance(0.85) ? 3 : r.chance(0.5) ? 2 : 1;
    for (let attempt = 0; topicIdx.length < nTopics && attempt < 8; attempt++) {
      const u = r.next();
      const pool =
        u < 0.65
          ? corpus.subfieldTopics[topic.subfieldIndex]!
          : u < 0.85
            ? corpus.fieldTopics[topic.fieldIndex]!
            : null;
      const t = pool ? pool[r.nextU32() % pool.length]! : corpus.topicSampler.sample(r);
      if (topicIdx.includes(t)) continue;
      topicIdx.push(t);
      const prev = topicScores[topicScores.length - 1]!;
      topicScores.push(r.chance(0.3) ? score(r, 0.9, prev) : score(r, 0.4, Math.min(prev, 0.9)));
    }
  }
  d.topicsStart = w.length;
  d.primaryTopicEnd = w.length;
  for (let k = 0; k < topicIdx.length; k++) {
    const t = corpus.topics[topicIdx[k]!]!;
    if (k > 0) w.text(',');
    w.raw(t.prefix);
    writeScore(w, topicScores[k]!);
    w.raw(t.suffix);
    if (k === 0) d.primaryTopicEnd = w.length;
  }
  d.topicsEnd = w.length;
}

/**
 * Keywords and concepts from the topics' vocabularies. Concepts go to their own writer: they are drawn
 * along with the keywords and printed after them.
 */
function writeKeywords(d: Draft, r: Rng, w: ByteWriter, c: ByteWriter): void {
  const { corpus, topicIdx, keywordNames, usedKeywords } = d;
  keywordNames.length = 0;
  d.keywordsStart = w.length;
  if (!d.isParatext) {
    const nKeywords = 3 + (r.nextU32() % 13);
    let s = 0.9 - r.next() * 0.05;
    const step = (s - 0.2) / nKeywords;
    usedKeywords.length = 0;
    for (let k = 0, attempt = 0; k < nKeywords && attempt < nKeywords * 3; attempt++) {
      const t = corpus.topics[topicIdx[k < 5 ? 0 : r.nextU32() % topicIdx.length]!]!;
      const vocab = topicVocab(t);
      const j = r.nextU32() % vocab.length;
      const entry = vocab[j]!;
      if (usedKeywords.includes(entry)) continue;
      usedKeywords.push(entry);
      if (k > 0) {
        w.text(',');
        c.text(',');
      }
      const sc = Math.max(0.2, s);
      w.raw(entry.keyword);
      writeScore(w, sc);
      w.text('}');
      c.raw(entry.concept);
      writeScore(c, sc);
      c.text('}');
      keywordNames.push(t.phrases[j] ?? t.phrases[0]!);
      s -= step * (0.5 + r.next());
      k++;
    }
    const generic = 1 + (r.nextU32() % 4);
    for (let k = 0; k < generic; k++) {
      if (c.length > 0) c.text(',');
      c.raw(GENERIC_CONCEPTS[r.nextU32() % GENERIC_CONCEPTS.length]!);
      if (k === 0) writeScore(c, r.next() * 0.4);
      else c.text('0');
      c.text('}');
    }
  }
  d.keywordsEnd = w.length;
}

/** The title, from the first keywords and (mostly) element phrases. */
function drawTitle(d: Draft, r: Rng): void {
  const topic = d.corpus.topics[d.topicIndex]!;
  const k1 = d.keywordNames[0] ?? r.pick(topic.phrases);
  const k2 = d.keywordNames[1] ?? r.pick(topic.phrases);
  const parts: TitleParts = {
    e: '',
    e2: '',
    k: k1,
    k2: k2 === k1 ? r.pick(topic.phrases) : k2,
    f: topic.subfieldName,
    r,
  };
  let title: string;
  if (d.isParatext) title = r.pick(PARATEXT_TITLES);
  else if (r.chance(0.65)) {
    parts.e = elementPhrase(r);
    parts.e2 = elementPhrase(r);
    title = r.pick(ELEMENT_TEMPLATES)(parts);
  } else title = r.pick(PLAIN_TEMPLATES)(parts);
  if (d.type === 'erratum') title = `Correction to: ${title}`;
  if (d.isRetracted && r.chance(0.5)) title = `RETRACTED: ${title}`;
  const styleDraw = r.next();
  if (styleDraw < 0.02) title = title.toUpperCase();
  else if (styleDraw < 0.2) title = toTitleCase(title);
  d.titleJson = J(title);
}

/** Citations: power law, older works more; a re-appearance adds some. */
function drawCitations(d: Draft, r: Rng): void {
  const { year, opts } = d;
  const age = CITATION_YEAR - year;
  let cited = year === LAST_YEAR ? r.powerLaw(0.3, 2.5, 20) : r.powerLaw(0.6 + age * 1.1, 1.35, 60000);
  if (d.isParatext) cited = 0;
  const citeLast = year === LAST_YEAR ? LAST_YEAR : CITATION_YEAR;
  const perYear = citationYears(cited, year, citeLast, r);
  const fwciDraw = r.next();
  const pctDraw = r.next();
  d.refDraw = r.next();
  if (opts.version > 0) {
    // the re-appearance: new citations counted in the year of the update
    const r2 = rng2.reseed(mix(d.corpus.seed, d.index, SALT_VERSION, opts.version));
    const extra = 1 + r2.powerLaw(1 + cited * 0.05, 1.5, 5000);
    cited += extra;
    const extraYear = Math.max(citeLast, Number(opts.updatedDay.slice(0, 4)));
    if (extraYear > citeLast) perYear.push(extra);
    else perYear[perYear.length - 1]! += extra;
  }
  d.cited = cited;
  d.perYear = perYear;
  const expected = 1 + Math.max(0, age) * 2.2;
  d.fwci =
    year === LAST_YEAR || age < 1
      ? 'null'
      : `${Math.round((cited / expected) * (0.6 + fwciDraw * 0.8) * 1e8) / 1e8}`;
  const pct = Math.min(0.99999, 1 - 1 / (1 + cited / (expected * 0.9)) ** 1.3 + pctDraw * 0.01);
  d.percentile =
    year === LAST_YEAR
      ? 'null'
      : `{"value":${Math.round(pct * 1e8) / 1e8},"is_in_top_1_percent":${pct >= 0.99},"is_in_top_10_percent":${pct >= 0.9}}`;
  d.pMin = Math.min(99, Math.floor(pct * 100));
  d.pMax = Math.min(100, d.pMin + 1 + (r.nextU32() % 6));
}

/** References: earlier works of the same topic (community), some of co-topics, some external. */
function drawReferences(d: Draft, r: Rng): void {
  const { corpus, topicIdx, refs, type } = d;
  const nRefs =
    d.isParatext || type === 'erratum' || type === 'dataset' ? 0 : 10 + Math.floor(d.refDraw ** 1.6 * 51);
  refs.length = 0;
  const yearSlot = corpus.yearOf[d.index]!;
  for (let k = 0, attempt = 0; k < nRefs && attempt < nRefs * 3; attempt++) {
    const u = r.next();
    let ref = -1;
    if (u < 0.85) {
      const t =
        u < 0.7 || topicIdx.length < 2 ? d.topicIndex : topicIdx[1 + (r.nextU32() % (topicIdx.length - 1))]!;
      const base = t * YEAR_STRIDE;
      const lo = corpus.keyStart[base]!;
      const hi = corpus.keyStart[base + yearSlot]!; // works of strictly earlier years
      if (hi > lo) ref = corpus.byTopicYear[lo + Math.floor((hi - lo) * r.next() ** 0.7)]!;
    }
    if (ref < 0) ref = -1 - (r.nextU32() % 0x3fffffff); // negative: an id outside the corpus
    if (refs.includes(ref)) continue;
    refs.push(ref);
    k++;
  }
}

/** Related works: mostly works of the same topic. */
function writeRelated(d: Draft, r: Rng, w: ByteWriter): void {
  const { corpus, topicIndex } = d;
  const nRelated = d.isParatext ? 0 : r.chance(0.9) ? 10 : 20;
  d.relatedStart = w.length;
  const lo = corpus.keyStart[topicIndex * YEAR_STRIDE]!;
  const hi = corpus.keyStart[(topicIndex + 1) * YEAR_STRIDE]!;
  for (let k = 0; k < nRelated; k++) {
    if (k > 0) w.text(',');
    if (hi - lo > 1 && r.chance(0.7))
      writeWorkId(w, corpus, corpus.byTopicYear[lo + (r.nextU32() % (hi - lo))]!);
    else {
      const digit = 1 + (r.nextU32() % 3);
      writeExternalId(w, digit, 100_000_000 + (r.nextU32() % ID_SPACE));
    }
  }
  d.relatedEnd = w.length;
}

/** Identifiers, APC, bibliographic details, MeSH, SDGs, funding, full text, the record's dates. */
function drawDetails(d: Draft, r: Rng): void {
  const { year, source, isParatext, isPreprint, isChapter, opts } = d;
  const hasMag = year < 2022 && r.chance(0.6);
  const hasPmid = r.chance(0.07);
  d.hasMag = hasMag;
  d.hasPmid = hasPmid;
  d.pmid = 10000000 + (mix(d.idNum, 5) % 30000000);
  d.indexedIn =
    isPreprint && source.doiPrefix === '48550'
      ? '["arxiv"]'
      : hasPmid
        ? '["crossref","pubmed"]'
        : d.hasDoi
          ? source.isOa
            ? '["crossref","doaj"]'
            : '["crossref"]'
          : '[]';
  const apc = source.isOa || d.oaStatus === 'hybrid' ? r.int(15, 55) * 100 : 0;
  const apcList = apc ? `{"value":${apc},"currency":"USD","value_usd":${apc}}` : 'null';
  d.apcList = apcList;
  d.apcPaid = apc && r.chance(0.5) ? apcList : 'null';
  const volume = isPreprint || isChapter ? 'null' : `"${Math.max(1, year - 1960 + (r.nextU32() % 80))}"`;
  const issue = volume === 'null' || r.chance(0.3) ? 'null' : `"${1 + (r.nextU32() % 24)}"`;
  const firstPage = isPreprint ? 0 : 1 + (r.nextU32() % 12000);
  d.biblio = `{"volume":${volume},"issue":${issue},"first_page":${firstPage ? `"${firstPage}"` : 'null'},"last_page":${firstPage ? `"${firstPage + 3 + (r.nextU32() % 20)}"` : 'null'}}`;
  let mesh = '[]';
  if (hasPmid) {
    const m: string[] = [];
    const n = 3 + (r.nextU32() % 8);
    for (let k = 0; k < n; k++) {
      const [dui, dname] = MESH[r.nextU32() % MESH.length]!;
      const [qui, qname] = MESH_QUALIFIERS[r.nextU32() % MESH_QUALIFIERS.length]!;
      m.push(
        `{"descriptor_ui":"${dui}","descriptor_name":"${dname}","qualifier_ui":${qui ? `"${qui}"` : '""'},"qualifier_name":${qname ? `"${qname}"` : 'null'},"is_major_topic":${k < 2}}`,
      );
    }
    mesh = `[${m.join(',')}]`;
  }
  d.mesh = mesh;
  let sdgs = '';
  if (!isParatext && r.chance(0.45)) {
    const a = SDG_SAMPLER.sample(r);
    sdgs = `{"score":${scoreText(0.4 + r.next() * 0.55)},"display_name":${SDGS[a]!.name},"id":${SDGS[a]!.id}}`;
    if (r.chance(0.2)) {
      const b = SDG_SAMPLER.sample(r);
      if (b !== a)
        sdgs += `,{"score":${scoreText(0.1 + r.next() * 0.3)},"display_name":${SDGS[b]!.name},"id":${SDGS[b]!.id}}`;
    }
  }
  d.sdgs = sdgs;
  let awards = '';
  let funders = '';
  if (!isParatext && year >= 2008 && r.chance(0.45)) {
    const n = 1 + (r.nextU32() % 3);
    const seen = new Set<number>();
    for (let k = 0; k < n; k++) {
      const f = r.nextU32() % FUNDERS.length;
      const funder = FUNDERS[f]!;
      awards += `${k > 0 ? ',' : ''}{"id":"${OA}G${1000000000 + r.nextU32()}","display_name":null,"funder_award_id":"${pad6(r.nextU32() % 999999)}${r.int(10, 99)}","funder_id":"${funder.id}","funder_display_name":${funder.nameJson}}`;
      if (!seen.has(f)) {
        funders += `${seen.size > 0 ? ',' : ''}${funder.json}`;
        seen.add(f);
      }
    }
  }
  d.awards = awards;
  d.funders = funders;
  d.hasPdf = d.isOa && r.chance(0.55);
  d.hasGrobid = d.hasPdf && r.chance(0.6);

  // dates of the record
  const t2 = rng2.reseed(mix(d.corpus.seed, d.index, SALT_VERSION + 100, opts.version));
  d.hour = t2.nextU32() % 24;
  d.minute = t2.nextU32() % 60;
  d.second = t2.nextU32() % 60;
  d.micro = t2.nextU32() % 1000000;
  // created no later than the first appearance
  const published = d.pubDate < opts.firstDay;
  d.created =
    published && year < 2025 && r.chance(0.85) ? '2025-10-10' : published ? d.pubDate : opts.firstDay;
  d.language = LANGS[LANG_SAMPLER.sample(r)]!;
}

/** The record, in the key order of OpenAlex: values from the draft, parts from the scratch writers. */
function writeRecord(d: Draft, out: ByteWriter, w: ByteWriter, c: ByteWriter): void {
  const { wid, titleJson, correspondingAuthors, correspondingInstitutions } = d;
  out.text('{"id":"');
  out.text(OA);
  out.text(wid);
  out.text('","doi":');
  out.text(d.doi);
  out.text(',"title":');
  out.text(titleJson);
  out.text(',"display_name":');
  out.text(titleJson);
  out.text(',"publication_year":');
  out.int(d.year);
  out.text(',"publication_date":"');
  out.text(d.pubDate);
  out.text('","ids":{"openalex":"');
  out.text(OA);
  out.text(wid);
  out.text('"');
  if (d.hasDoi) {
    out.text(',"doi":"');
    out.text(d.doiUrl);
    out.text('"');
  }
  if (d.hasMag) {
    out.text(',"mag":"');
    out.int(d.idNum - 2_000_000_000);
    out.text('"');
  }
  if (d.hasPmid) {
    out.text(',"pmid":"https://pubmed.ncbi.nlm.nih.gov/');
    out.int(d.pmid);
    out.text('"');
  }
  out.text('},"language":');
  out.text(d.language);
  out.text(',"primary_location":');
  out.range(w, d.primaryStart, d.primaryEnd);
  out.text(',"type":"');
  out.text(d.type);
  out.text('","indexed_in":');
  out.text(d.indexedIn);
  out.text(',"open_access":{"is_oa":');
  out.bool(d.isOa);
  out.text(',"oa_status":"');
  out.text(d.oaStatus);
  out.text('","oa_url":');
  out.text(d.oaUrl);
  out.text(',"any_repository_has_fulltext":');
  out.bool(d.repoCopies > 0);
  out.text('},"authorships":[');
  out.range(w, d.authorsStart, d.authorsEnd);
  out.text('],"institutions":[],"countries_distinct_count":');
  out.int(d.countries.length);
  out.text(',"institutions_distinct_count":');
  out.int(d.institutions.length);
  out.text(',"corresponding_author_ids":[');
  for (let k = 0; k < correspondingAuthors.length; k++) {
    out.text(k > 0 ? ',"' : '"');
    writeAuthorId(out, correspondingAuthors[k]!);
    out.text('"');
  }
  out.text('],"corresponding_institution_ids":[');
  for (let k = 0; k < correspondingInstitutions.length; k++) {
    out.text(k > 0 ? ',"' : '"');
    out.text(correspondingInstitutions[k]!.id);
    out.text('"');
  }
  out.text('],"apc_list":');
  out.text(d.apcList);
  out.text(',"apc_paid":');
  out.text(d.apcPaid);
  out.text(',"fwci":');
  out.text(d.fwci);
  out.text(',"has_fulltext":');
  out.bool(d.hasPdf);
  out.text(',"cited_by_count":');
  out.int(d.cited);
  out.text(',"citation_normalized_percentile":');
  out.text(d.percentile);
  out.text(',"cited_by_percentile_year":{"min":');
  out.int(d.pMin);
  out.text(',"max":');
  out.int(d.pMax);
  out.text('},"biblio":');
  out.text(d.biblio);
  out.text(',"is_retracted":');
  out.bool(d.isRetracted);
  out.text(',"is_paratext":');
  out.bool(d.isParatext);
  out.text(',"is_xpac":false,"primary_topic":');
  if (d.topicIdx.length > 0) out.range(w, d.topicsStart, d.primaryTopicEnd);
  else out.text('null');
  out.text(',"topics":[');
  out.range(w, d.topicsStart, d.topicsEnd);
  out.text('],"keywords":[');
  out.range(w, d.keywordsStart, d.keywordsEnd);
  out.text('],"concepts":[');
  out.range(c, 0, c.length);
  out.text('],"mesh":');
  out.text(d.mesh);
  out.text(',"locations_count":');
  out.int(1 + d.repoCopies);
  out.text(',"locations":[');
  out.range(w, d.primaryStart, d.locationsEnd);
  out.text('],"best_oa_location":');
  if (d.bestOaStart < 0) out.text('null');
  else out.range(w, d.bestOaStart, d.bestOaEnd);
  out.text(',"sustainable_development_goals":[');
  out.text(d.sdgs);
  out.text('],"awards":[');
  out.text(d.awards);
  out.text('],"funders":[');
  out.text(d.funders);
  out.text('],"has_content":{"grobid_xml":');
  out.bool(d.hasGrobid);
  out.text(',"pdf":');
  out.bool(d.hasPdf);
  out.text('},');
  if (d.hasPdf) {
    out.text('"content_urls":{"pdf":"https://content.openalex.org/works/');
    out.text(wid);
    out.text('.pdf"');
    if (d.hasGrobid) {
      out.text(',"grobid_xml":"https://content.openalex.org/works/');
      out.text(wid);
      out.text('.grobid-xml"');
    }
    out.text('},');
  }
  out.text('"referenced_works_count":');
  out.int(d.refs.length);
  out.text(',"referenced_works":[');
  let first = true;
  for (const ref of d.refs) {
    if (!first) out.text(',');
    first = false;
    if (ref >= 0) writeWorkId(out, d.corpus, ref);
    else writeExternalId(out, 1 + (-ref % 3), 100_000_000 + (-ref % ID_SPACE));
  }
  out.text('],"related_works":[');
  out.range(w, d.relatedStart, d.relatedEnd);
  out.text('],"counts_by_year":[');
  first = true;
  const { perYear, year } = d;
  for (let k = perYear.length - 1; k >= 0; k--) {
    const y = year + k;
    const n = perYear[k]!;
    if (n > 0 && y >= COUNTS_WINDOW_START) {
      out.text(first ? '{"year":' : ',{"year":');
      first = false;
      out.int(y);
      out.text(',"cited_by_count":');
      out.int(n);
      out.text('}');
    }
  }
  out.text('],"updated_date":"');
  out.text(d.opts.updatedDay);
  out.text('T');
  out.padded(d.hour, 2);
  out.text(':');
  out.padded(d.minute, 2);
  out.text(':');
  out.padded(d.second, 2);
  out.text('.');
  out.padded(d.micro, 6);
  out.text('","created_date":"');
  out.text(d.created);
  out.text('T00:00:00"}');
}

const PARATEXT_TITLES = [
  'Editorial Board',
  'Front Matter',
  'Table of Contents',
  'Cover Image',
  'Issue Information',
];

/** The JSON text (no newline) of work `index`. */
export function buildWork(corpus: Corpus, index: number, opts: BuildOptions): string {
  const out = textScratch;
  out.length = 0;
  writeWork(corpus, index, opts, out);
  return decoder.decode(out.bytes.subarray(0, out.length));
}
