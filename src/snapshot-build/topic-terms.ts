import Database from 'better-sqlite3';
import { TITLE_TOKENIZER, TOPIC_TERMS } from '../snapshot/schema.js';
import { getOrCreate } from '../util/maps.js';

/**
 * What the corpus's own (title, community) pairs teach about a question's topic: for each title
 * term (stemmed as the titles' index stems it), the communities whose titles hold it and how many
 * do; for each community, its titles and its terms in all. A community's name, description and
 * taxonomy keywords count as TEXT_WEIGHT titles of it. Research reads the question's terms here
 * (a few primary-key lookups) and scores each community by how likely its titles are to hold them
 * (core/research/topic-model.ts). Computed at build time beside the titles' index, in its thread
 * (title-index.ts), from the paper rows' titles: the same for a full and an incremental build.
 */

/** A community's own texts count as this many of its titles. */
const TEXT_WEIGHT = 3;
/** Communities kept per term, most titles first (a common word's long tail counts little). */
const TERM_TOPICS = 64;
/** Terms held fewer times than this (one title, in no community's texts) are left out. */
const LEAST_WEIGHT = 2;

/** What the model is made of: each paper's community by ordinal (-1: none), and each community's texts. */
export interface TopicTermsInput {
  clusters: Int32Array;
  texts: { topic: number; text: string }[];
}

const LETTER_OR_DIGIT = /[\p{L}\p{N}]/u;
/** Per UTF-16 code unit beyond ASCII: 0 not yet asked, 1 letter or digit, 2 not (one regex test per unit). */
const WIDE_CLASS = new Uint8Array(0x10000);
const inWideWord = (c: number) => {
  let k = WIDE_CLASS[c]!;
  if (k === 0) k = WIDE_CLASS[c] = LETTER_OR_DIGIT.test(String.fromCharCode(c)) ? 1 : 2;
  return k === 1;
};

/**
 * The distinct words of many texts, numbered as first seen. Words are runs of letters and digits,
 * lower-cased, ASCII told by its codes and the rest by its Unicode class; each is found in an
 * open-addressing table by a hash of its char codes, so a word seen before costs no string (at
 * 1M titles, 9M words of which some 20k distinct, a string and a Map look-up each took 1.2 s).
 */
class Words {
  readonly list: string[] = [];
  private hashes = new Ints();
  private slots = new Int32Array(1 << 12).fill(-1);

  /** Each word of `s[start, end)`, lower case already, by its number onto `out`. */
  add(s: string, start: number, end: number, out: Ints): void {
    let from = -1;
    let hash = 0;
    for (let i = start; i <= end; i++) {
      const c = i < end ? s.charCodeAt(i) : 32;
      const inWord = c < 128 ? (c >= 97 && c <= 122) || (c >= 48 && c <= 57) : inWideWord(c);
      if (inWord) {
        if (from < 0) {
          from = i;
          hash = 0x811c9dc5;
        }
        hash = Math.imul(hash ^ c, 0x01000193);
      } else if (from >= 0) {
        out.push(this.idOf(s, from, i, hash));
        from = -1;
      }
    }
  }

  private idOf(s: string, start: number, end: number, hash: number): number {
    const mask = this.slots.length - 1;
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const id = this.slots[slot]!;
      if (id < 0) {
        this.slots[slot] = this.list.length;
        this.list.push(ownCopy(s, start, end));
        this.hashes.push(hash);
        if (this.list.length * 2 > this.slots.length) this.grow();
        return this.list.length - 1;
      }
      if (this.hashes.data[id] === hash && sameText(this.list[id]!, s, start, end)) return id;
    }
  }

  private grow(): void {
    this.slots = new Int32Array(this.slots.length * 2).fill(-1);
    const mask = this.slots.length - 1;
    for (let id = 0; id < this.list.length; id++) {
      let slot = this.hashes.data[id]! & mask;
      while (this.slots[slot]! >= 0) slot = (slot + 1) & mask;
      this.slots[slot] = id;
    }
  }
}

/**
 * A copy of s[start, end) that keeps no reference to `s`: V8's slices of 13 characters or more
 * point into their parent, so each new long word kept a whole string of titles alive (1.2 GB of
 * the topic model's thread at 10M works).
 */
const ownCopy = (s: string, start: number, end: number) =>
  Buffer.from(s.slice(start, end), 'utf16le').toString('utf16le');

const sameText = (word: string, s: string, start: number, end: number) => {
  if (word.length !== end - start) return false;
  for (let i = 0; i < word.length; i++) if (word.charCodeAt(i) !== s.charCodeAt(start + i)) return false;
  return true;
};

/** Growable Int32 list. */
class Ints {
  data: Int32Array;
  length = 0;
  constructor(capacity = 1 << 16) {
    this.data = new Int32Array(capacity);
  }
  push(v: number): void {
    if (this.length === this.data.length) {
      const next = new Int32Array(this.data.length * 2);
      next.set(this.data);
      this.data = next;
    }
    this.data[this.length++] = v;
  }
}

/**
 * The terms of words as the titles' tokenizer makes them, learnt a batch of new words at a time
 * (stemBatch): each word's term number, -1 for a word that is not exactly one term. Terms are
 * numbered as first met.
 */
class Stems {
  readonly terms: string[] = [];
  private readonly ids = new Map<string, number>();
  stemOf = new Int32Array(0);
  /** Words stemmed so far (words 0 .. known - 1 of the Words table). */
  known = 0;

  /** Stems the words of `words` not stemmed yet. */
  learn(words: string[]): void {
    if (words.length === this.known) return;
    const fresh = words.slice(this.known);
    const next = new Int32Array(words.length);
    next.set(this.stemOf);
    for (const [i, term] of stemAll(fresh).entries()) {
      let id = -1;
      if (term !== null) {
        id = this.ids.get(term) ?? -1;
        if (id < 0) {
          id = this.terms.length;
          this.ids.set(term, id);
          this.terms.push(term);
        }
      }
      next[this.known + i] = id;
    }
    this.stemOf = next;
    this.known = words.length;
  }
}

/** Each word's one term as the titles' tokenizer makes it, null when it makes none or several. */
function stemAll(words: string[]): (string | null)[] {
  const db = new Database(':memory:');
  try {
    db.exec(
      `CREATE VIRTUAL TABLE w USING fts5(x, tokenize = '${TITLE_TOKENIZER}'); CREATE VIRTUAL TABLE v USING fts5vocab(w, instance);`,
    );
    const insert = db.prepare('INSERT INTO w (rowid, x) VALUES (?, ?)');
    db.transaction(() => {
      for (let i = 0; i < words.length; i++) insert.run(i, words[i]);
    })();
    const termOf: (string | null)[] = new Array(words.length).fill(null);
    const termsOf = new Int32Array(words.length);
    for (const [term, doc] of db.prepare('SELECT term, doc FROM v').raw().iterate() as Iterable<
      [string, number]
    >) {
      termsOf[doc]!++;
      termOf[doc] = term;
    }
    for (let i = 0; i < words.length; i++) if (termsOf[i] !== 1) termOf[i] = null;
    return termOf;
  } finally {
    db.close();
  }
}

/**
 * Titles joined into one string at most: about 25 MB of text, far under V8's longest string
 * (about 512 MB) and SQLite's longest value (1e9 bytes); the string and its lower-cased copy are
 * garbage once visited, so a smaller one keeps the thread's heap small whatever the corpus.
 */
const TITLES_A_STRING = 1 << 18;

/** How many titles are read a string at a time, and how many words wait to be counted. */
export interface TopicTermsBatches {
  titles: number;
  words: number;
}

/**
 * The titles of the `papers` table in ordinal order, lower case, each as a range of a string.
 * Read as strings of TITLES_A_STRING titles joined by line breaks when the ordinals run from 0
 * without a gap and no title holds a line break (normalised titles do not): a row at a time took
 * 0.85 s at 1M titles, the one string 0.3 s. The ordinal is the rowid, and a scan of a range of
 * rowids reads it in rowid order (no ORDER BY: the aggregate's own sorter doubled the time; this
 * connection never sets reverse_unordered_selects). Lower-casing the whole is lower-casing each
 * title: a line break is neither cased nor case-ignorable, so it ends a title for the final-sigma
 * rule as the title's end does. The titles are visited a string at a time as they are read (all
 * of them at once were 1-2 GB at 10M works), and the writer waits for the last.
 */
function forEachTitle(
  db: Database.Database,
  visit: (ordinal: number, text: string, start: number, end: number) => void,
  /** Called once every title is read from `db`. */
  onRead: () => void,
  titlesAString: number,
): void {
  const shape = db.prepare('SELECT count(*), min(ordinal), max(ordinal) FROM papers').raw().get() as [
    number,
    number | null,
    number | null,
  ];
  const [n, first, last] = shape;
  let visited = 0;
  if (n > 0 && first === 0 && last === n - 1) {
    const chunk = db
      .prepare(
        "SELECT group_concat(coalesce(title, ''), char(10)) FROM papers WHERE ordinal >= ? AND ordinal < ?",
      )
      .pluck();
    for (; visited < n; visited += titlesAString) {
      const count = Math.min(titlesAString, n - visited);
      const text = (chunk.get(visited, visited + count) as string).toLowerCase();
      const ends: number[] = [];
      for (let at = text.indexOf('\n'); at >= 0 && ends.length < count; at = text.indexOf('\n', at + 1))
        ends.push(at);
      if (ends.length !== count - 1) break;
      ends.push(text.length);
      if (visited + count === n) onRead();
      for (let i = 0, start = 0; i < count; start = ends[i]! + 1, i++)
        visit(visited + i, text, start, ends[i]!);
    }
    if (visited >= n) return;
  }
  // A title holding a line break, or ordinals with gaps: the titles not yet visited row by row,
  // all read before any is visited.
  const rows = db
    .prepare('SELECT ordinal, title FROM papers WHERE ordinal >= ? ORDER BY ordinal')
    .raw()
    .all(visited) as [number, string | null][];
  onRead();
  for (const [ordinal, title] of rows) {
    const text = title ? title.toLowerCase() : '';
    visit(ordinal, text, 0, text.length);
  }
}

/**
 * How many titles of each community hold each term: (term, community) pairs counted in an
 * open-addressing table, so the memory is the distinct pairs, not every word of every title (at
 * 10M works the titles' words and their pairs in lists took gigabytes).
 */
class PairCounts {
  term = new Int32Array(1 << 16).fill(-1);
  topic = new Int32Array(1 << 16);
  count = new Int32Array(1 << 16);
  size = 0;

  add(term: number, topic: number, by = 1): void {
    const mask = this.term.length - 1;
    for (let slot = pairHash(term, topic) & mask; ; slot = (slot + 1) & mask) {
      const t = this.term[slot]!;
      if (t < 0) {
        this.term[slot] = term;
        this.topic[slot] = topic;
        this.count[slot] = by;
        if (++this.size * 2 > this.term.length) this.grow();
        return;
      }
      if (t === term && this.topic[slot] === topic) {
        this.count[slot]! += by;
        return;
      }
    }
  }

  private grow(): void {
    const { term, topic, count } = this;
    this.term = new Int32Array(term.length * 2).fill(-1);
    this.topic = new Int32Array(term.length * 2);
    this.count = new Int32Array(term.length * 2);
    this.size = 0;
    for (let slot = 0; slot < term.length; slot++)
      if (term[slot]! >= 0) this.add(term[slot]!, topic[slot]!, count[slot]!);
  }
}

const pairHash = (term: number, topic: number) => {
  const h = Math.imul(term ^ Math.imul(topic, 0x9e3779b1), 0x85ebca6b);
  return (h ^ (h >>> 15)) >>> 0;
};

/** Titles' words waiting to be counted: stemmed a batch at a time, then counted into the pairs. */
const PENDING_WORDS = 1 << 22;

/**
 * Writes `topic_terms` and `topic_lengths` into `db` (the titles' side file, its `papers` table
 * holding the titles by ordinal), in key order so the same titles give the same bytes. The titles
 * are read once (the writer writes the snapshot again after); their words are held a batch at a
 * time, stemmed (new words only) and counted into the (term, community) pairs.
 */
export function buildTopicTerms(
  db: Database.Database,
  input: TopicTermsInput,
  onTitlesRead: () => void = () => {},
  batches: TopicTermsBatches = { titles: TITLES_A_STRING, words: PENDING_WORDS },
): void {
  const { clusters, texts } = input;
  const words = new Words();
  const stems = new Stems();
  const pairs = new PairCounts();
  // Each community's titles (by community id), and which title last counted a term (once a title).
  const titlesOf = new Map<number, number>();
  let lastTitle = new Int32Array(0);
  let title = 0;
  // The batch: its titles' word numbers in one list, where each title's start, and its community.
  const tokens = new Ints();
  const starts = new Ints();
  const titleTopic = new Ints();
  const countBatch = () => {
    stems.learn(words.list);
    if (lastTitle.length < stems.terms.length) {
      const next = new Int32Array(stems.terms.length * 2).fill(-1);
      next.set(lastTitle);
      lastTitle = next;
    }
    starts.push(tokens.length);
    for (let t = 0; t < titleTopic.length; t++, title++) {
      const topic = titleTopic.data[t]!;
      for (let i = starts.data[t]!; i < starts.data[t + 1]!; i++) {
        const term = stems.stemOf[tokens.data[i]!]!;
        if (term < 0 || lastTitle[term] === title) continue;
        lastTitle[term] = title;
        pairs.add(term, topic);
      }
    }
    tokens.length = 0;
    starts.length = 0;
    titleTopic.length = 0;
  };
  // The writer waits for the titles to be read (it writes the same file next), not for their words.
  forEachTitle(
    db,
    (ordinal, text, start, end) => {
      const topic = ordinal < clusters.length ? clusters[ordinal]! : -1;
      if (topic < 0 || start === end) return;
      titlesOf.set(topic, (titlesOf.get(topic) ?? 0) + 1);
      starts.push(tokens.length);
      titleTopic.push(topic);
      words.add(text, start, end, tokens);
      if (tokens.length >= batches.words) countBatch();
    },
    onTitlesRead,
    batches.titles,
  );
  countBatch();
  // The communities' own texts, by term.
  const textWords = texts.map((t) => {
    const text = t.text.toLowerCase();
    const ids = new Ints(16);
    words.add(text, 0, text.length, ids);
    return ids.data.subarray(0, ids.length);
  });
  stems.learn(words.list);
  const textTopics = new Map<number, number[]>();
  for (let i = 0; i < texts.length; i++) {
    for (const term of new Set(Array.from(textWords[i]!, (w) => stems.stemOf[w]!)))
      if (term >= 0) getOrCreate(textTopics, term, () => []).push(texts[i]!.topic);
  }
  const { terms } = stems;

  // The pairs grouped by term (counting, then filling).
  const count = new Int32Array(terms.length + 1);
  for (let slot = 0; slot < pairs.term.length; slot++)
    if (pairs.term[slot]! >= 0) count[pairs.term[slot]! + 1]!++;
  for (let i = 0; i < terms.length; i++) count[i + 1]! += count[i]!;
  const at = count.slice(0, terms.length);
  const pairTopic = new Int32Array(pairs.size);
  const pairTitles = new Int32Array(pairs.size);
  for (let slot = 0; slot < pairs.term.length; slot++) {
    const term = pairs.term[slot]!;
    if (term < 0) continue;
    const k = at[term]!++;
    pairTopic[k] = pairs.topic[slot]!;
    pairTitles[k] = pairs.count[slot]!;
  }

  // Per term, its communities and weights (titles, plus TEXT_WEIGHT for a community's texts).
  const lengths = new Map<number, { titles: number; weight: number }>();
  const lengthOf = (topic: number) => getOrCreate(lengths, topic, () => ({ titles: 0, weight: 0 }));
  for (const [topic, titles] of titlesOf) lengthOf(topic).titles = titles;
  const order = terms.map((_, i) => i).sort((a, b) => (terms[a]! < terms[b]! ? -1 : 1));
  db.exec(TOPIC_TERMS);
  const insert = db.prepare('INSERT INTO topic_terms VALUES (?, ?, ?)');
  db.transaction(() => {
    const topics: number[] = [];
    const weights: number[] = [];
    // Each community's place in the term's lists (-1: not yet), by community id.
    let maxTopic = 0;
    for (const topic of titlesOf.keys()) maxTopic = Math.max(maxTopic, topic);
    for (const t of texts) maxTopic = Math.max(maxTopic, t.topic);
    const place = new Int32Array(maxTopic + 1).fill(-1);
    for (const term of order) {
      // The term's titles by community, then its communities' texts.
      topics.length = 0;
      weights.length = 0;
      for (let i = count[term]!; i < count[term + 1]!; i++) {
        place[pairTopic[i]!] = topics.length;
        topics.push(pairTopic[i]!);
        weights.push(pairTitles[i]!);
      }
      for (const topic of textTopics.get(term) ?? []) {
        const k = place[topic]!;
        if (k >= 0) weights[k]! += TEXT_WEIGHT;
        else {
          place[topic] = topics.length;
          topics.push(topic);
          weights.push(TEXT_WEIGHT);
        }
      }
      for (const topic of topics) place[topic] = -1;
      let weight = 0;
      for (let k = 0; k < topics.length; k++) {
        weight += weights[k]!;
        lengthOf(topics[k]!).weight += weights[k]!;
      }
      if (weight < LEAST_WEIGHT) continue;
      const kept = topics
        .map((_, k) => k)
        .sort((a, b) => weights[b]! - weights[a]! || topics[a]! - topics[b]!)
        .slice(0, TERM_TOPICS);
      const blob = new Int32Array(kept.length * 2);
      kept.forEach((k, i) => {
        blob[2 * i] = topics[k]!;
        blob[2 * i + 1] = weights[k]!;
      });
      insert.run(terms[term]!, weight, Buffer.from(blob.buffer, blob.byteOffset, blob.byteLength));
    }
    const length = db.prepare('INSERT INTO topic_lengths VALUES (?, ?, ?)');
    for (const topic of [...lengths.keys()].sort((a, b) => a - b)) {
      const l = lengths.get(topic)!;
      length.run(topic, l.titles, l.weight);
    }
  })();
}
