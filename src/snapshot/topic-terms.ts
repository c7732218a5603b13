import Database from 'better-sqlite3';
import { getOrCreate } from '../util/maps.js';
import { TITLE_TOKENIZER, TOPIC_TERMS } from './schema.js';

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

/**
 * A text's words (runs of letters and digits), lower-cased, into `out`: ASCII by its codes, the
 * rest by its Unicode class (about twice as fast as a split on a Unicode class at 1M titles).
 */
function wordsOf(text: string, out: string[]): string[] {
  out.length = 0;
  const s = text.toLowerCase();
  let start = -1;
  for (let i = 0; i <= s.length; i++) {
    const c = i < s.length ? s.charCodeAt(i) : 32;
    const inWord = c < 128 ? (c >= 97 && c <= 122) || (c >= 48 && c <= 57) : LETTER_OR_DIGIT.test(s[i]!);
    if (inWord) {
      if (start < 0) start = i;
    } else if (start >= 0) {
      out.push(s.slice(start, i));
      start = -1;
    }
  }
  return out;
}

/** Growable Int32 list. */
class Ints {
  data = new Int32Array(1 << 16);
  length = 0;
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
 * The terms of many words at once, as the titles' tokenizer makes them: each distinct word a row
 * of an in-memory index of the same tokenizer, read back from its vocabulary. A word that is not
 * exactly one term maps to -1; terms are numbered in the order of `terms`.
 */
function stemAll(words: string[]): { stemOf: Int32Array; terms: string[] } {
  const db = new Database(':memory:');
  try {
    db.exec(
      `CREATE VIRTUAL TABLE w USING fts5(x, tokenize = '${TITLE_TOKENIZER}'); CREATE VIRTUAL TABLE v USING fts5vocab(w, instance);`,
    );
    const insert = db.prepare('INSERT INTO w (rowid, x) VALUES (?, ?)');
    db.transaction(() => {
      for (let i = 0; i < words.length; i++) insert.run(i, words[i]);
    })();
    const stemOf = new Int32Array(words.length).fill(-1);
    const termsOf = new Int32Array(words.length);
    const ids = new Map<string, number>();
    const terms: string[] = [];
    for (const [term, doc] of db.prepare('SELECT term, doc FROM v').raw().iterate() as Iterable<
      [string, number]
    >) {
      termsOf[doc]!++;
      let id = ids.get(term);
      if (id === undefined) {
        id = terms.length;
        ids.set(term, id);
        terms.push(term);
      }
      stemOf[doc] = id;
    }
    for (let i = 0; i < words.length; i++) if (termsOf[i] !== 1) stemOf[i] = -1;
    return { stemOf, terms };
  } finally {
    db.close();
  }
}

/**
 * Writes `topic_terms` and `topic_lengths` into `db` (the titles' side file, its `papers` table
 * holding the titles by ordinal), in key order so the same titles give the same bytes.
 */
export function buildTopicTerms(db: Database.Database, input: TopicTermsInput): void {
  const { clusters, texts } = input;
  // The titles' words, numbered as first seen; each title's word numbers in one list.
  const wordIds = new Map<string, number>();
  const words: string[] = [];
  const idOf = (w: string) => {
    let id = wordIds.get(w);
    if (id === undefined) {
      id = words.length;
      wordIds.set(w, id);
      words.push(w);
    }
    return id;
  };
  const tokens = new Ints();
  const titleTopic = new Ints();
  const starts = new Ints();
  const buffer: string[] = [];
  for (const [ordinal, title] of db
    .prepare('SELECT ordinal, title FROM papers ORDER BY ordinal')
    .raw()
    .iterate() as Iterable<[number, string | null]>) {
    const topic = ordinal < clusters.length ? clusters[ordinal]! : -1;
    if (topic < 0 || !title) continue;
    starts.push(tokens.length);
    titleTopic.push(topic);
    for (const w of wordsOf(title, buffer)) tokens.push(idOf(w));
  }
  starts.push(tokens.length);
  const textWords = texts.map((t) => wordsOf(t.text, buffer).map(idOf));
  const { stemOf, terms } = stemAll(words);

  // Each term's titles, grouped by term (counting, then filling): their communities.
  const seen = new Int32Array(terms.length).fill(-1);
  const count = new Int32Array(terms.length + 1);
  const titles = titleTopic.length;
  const forEachTerm = (t: number, f: (term: number) => void) => {
    for (let i = starts.data[t]!; i < starts.data[t + 1]!; i++) {
      const term = stemOf[tokens.data[i]!]!;
      if (term < 0 || seen[term] === t) continue;
      seen[term] = t;
      f(term);
    }
  };
  for (let t = 0; t < titles; t++) forEachTerm(t, (term) => count[term + 1]!++);
  for (let i = 0; i < terms.length; i++) count[i + 1]! += count[i]!;
  const at = count.slice(0, terms.length);
  const topicsOf = new Int32Array(count[terms.length]!);
  seen.fill(-1);
  for (let t = 0; t < titles; t++) forEachTerm(t, (term) => (topicsOf[at[term]!++] = titleTopic.data[t]!));
  // The communities' own texts, by term.
  const textTopics = new Map<number, number[]>();
  for (let i = 0; i < texts.length; i++) {
    for (const term of new Set(textWords[i]!.map((w) => stemOf[w]!)))
      if (term >= 0) getOrCreate(textTopics, term, () => []).push(texts[i]!.topic);
  }

  // Per term, its communities and weights (titles, plus TEXT_WEIGHT for a community's texts).
  const lengths = new Map<number, { titles: number; weight: number }>();
  const lengthOf = (topic: number) => getOrCreate(lengths, topic, () => ({ titles: 0, weight: 0 }));
  for (let t = 0; t < titles; t++) lengthOf(titleTopic.data[t]!).titles++;
  const order = terms.map((_, i) => i).sort((a, b) => (terms[a]! < terms[b]! ? -1 : 1));
  db.exec(TOPIC_TERMS);
  const insert = db.prepare('INSERT INTO topic_terms VALUES (?, ?, ?)');
  db.transaction(() => {
    const topics: number[] = [];
    const weights: number[] = [];
    for (const term of order) {
      // Runs of one community in the term's sorted titles, then its communities' texts.
      const slice = topicsOf.subarray(count[term]!, count[term + 1]!).sort();
      topics.length = 0;
      weights.length = 0;
      for (let i = 0; i < slice.length; i++) {
        if (i > 0 && slice[i] === slice[i - 1]) weights[weights.length - 1]!++;
        else {
          topics.push(slice[i]!);
          weights.push(1);
        }
      }
      for (const topic of textTopics.get(term) ?? []) {
        const k = topics.indexOf(topic);
        if (k >= 0) weights[k]! += TEXT_WEIGHT;
        else {
          topics.push(topic);
          weights.push(TEXT_WEIGHT);
        }
      }
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

/** A term's communities and their weights, as stored (topic, weight pairs, heaviest first). */
export interface TopicTerm {
  /** Its weight over every community (titles holding it, plus texts). */
  weight: number;
  topics: Int32Array;
}

/** Each community's titles and weight of terms, and the weight of every term in all. */
export interface TopicLengths {
  titles: Map<number, number>;
  weight: Map<number, number>;
  total: number;
}
