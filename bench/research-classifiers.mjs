#!/usr/bin/env node
// How far titles alone can place a question in its community: plain classifiers over the same
// split as eval:research (works held out of the bundled sample by the hash of their id, tuning
// and held-back parts by another hash), each scored by the MRR of the held-out work's primary
// topic on full-title and shortened-title questions, beside the eval's BM25 top-10 vote:
//   knn     stemmed BM25 over the training titles, the top K papers vote with their topics,
//           each vote weighted by (score / best)^POW, a further topic by a half;
//   nb      a naive Bayes over the titles' stemmed words (each paper counts for its primary
//           topic), Dirichlet-smoothed toward the corpus, with a size prior;
//   knn+nb  the two shares added (and the topics' own texts counted into the naive Bayes);
//   perceptron  an averaged multi-class perceptron over words and word pairs.
// It reads the sample only (no build): node bench/research-classifiers.mjs [tuning|held-back]
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { gunzipSync } from 'node:zlib';

const root = resolve(import.meta.dirname, '..');
const { BUNDLED_SAMPLE } = await import(join(root, 'dist/config/paths.js'));
const part = process.argv[2] ?? 'tuning';
const hash = (s) => Number.parseInt(createHash('sha256').update(s).digest('hex').slice(0, 8), 16);
const shortId = (u) => (u ? u.replace(/^https:\/\/openalex\.org\//, '') : null);

const training = [];
const heldOut = [];
for (const file of BUNDLED_SAMPLE.works)
  for (const line of gunzipSync(readFileSync(file)).toString('utf8').split('\n')) {
    if (!line.trim()) continue;
    const w = JSON.parse(line);
    const id = shortId(w.id);
    const r = {
      id,
      title: w.display_name ?? w.title ?? '',
      primary: shortId(w.primary_topic?.id),
      topics: (w.topics ?? []).map((t) => shortId(t.id)),
    };
    (hash(`held-out ${id}`) % 1000 < 30 ? heldOut : training).push(r);
  }
const taxonomy = JSON.parse(readFileSync(BUNDLED_SAMPLE.topics, 'utf8'));

const tokens = (s) => (s ?? '').toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
const STOP = new Set('a an and the of for in on to with by from at is are as its via using based'.split(' '));
const stem = (t) =>
  t.length > 4 && t.endsWith('ies')
    ? `${t.slice(0, -3)}y`
    : t.length > 3 && t.endsWith('s') && !t.endsWith('ss')
      ? t.slice(0, -1)
      : t;
const terms = (s) =>
  tokens(s)
    .filter((t) => !STOP.has(t))
    .map(stem);

/** A BM25 index (k1 1.2, b 0.75) of the training titles under a tokenizer. */
function bm25Index(tokenize) {
  const postings = new Map();
  const lengths = training.map((w, d) => {
    const ts = tokenize(w.title);
    const tf = new Map();
    for (const t of ts) tf.set(t, (tf.get(t) ?? 0) + 1);
    for (const [t, f] of tf) {
      if (!postings.has(t)) postings.set(t, []);
      postings.get(t).push([d, f]);
    }
    return ts.length;
  });
  const avg = lengths.reduce((a, b) => a + b, 0) / training.length;
  const idf = (t) => {
    const n = postings.get(t)?.length ?? 0;
    return Math.log(1 + (training.length - n + 0.5) / (n + 0.5));
  };
  const search = (q) => {
    const scores = new Map();
    for (const t of new Set(tokenize(q))) {
      const w = idf(t);
      for (const [d, f] of postings.get(t) ?? [])
        scores.set(d, (scores.get(d) ?? 0) + (w * f * 2.2) / (f + 1.2 * (0.25 + (0.75 * lengths[d]) / avg)));
    }
    return [...scores].sort((a, b) => b[1] - a[1] || a[0] - b[0]);
  };
  return { search, idf, postings };
}
const plain = bm25Index(tokens);
const stemmed = bm25Index(terms);
const sorted = (m) => [...m].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([t]) => t);

function baseline(q) {
  const votes = new Map();
  for (const [d, s] of plain.search(q).slice(0, 10))
    for (const t of training[d].topics) {
      const v = votes.get(t) ?? { n: 0, s: 0 };
      v.n++;
      v.s += s;
      votes.set(t, v);
    }
  return [...votes]
    .sort((a, b) => b[1].n - a[1].n || b[1].s - a[1].s || a[0].localeCompare(b[0]))
    .map(([t]) => t);
}

function knn(q, k = 30, pow = 2) {
  const top = stemmed.search(q).slice(0, k);
  const votes = new Map();
  let sum = 0;
  for (const [d, s] of top) {
    const w = (s / top[0][1]) ** pow;
    for (const t of training[d].topics) {
      const v = t === training[d].primary ? w : w / 2;
      votes.set(t, (votes.get(t) ?? 0) + v);
      sum += v;
    }
  }
  for (const [t, v] of votes) votes.set(t, v / sum);
  return votes;
}

/** Naive Bayes counts: per topic, its words (and its own texts at `textWeight` a word). */
function naiveBayes(textWeight) {
  const byTopic = new Map();
  const corpus = new Map();
  const length = new Map();
  const docs = new Map();
  let total = 0;
  const add = (topic, ts, w) => {
    if (!byTopic.has(topic)) byTopic.set(topic, new Map());
    const m = byTopic.get(topic);
    for (const t of ts) {
      m.set(t, (m.get(t) ?? 0) + w);
      corpus.set(t, (corpus.get(t) ?? 0) + w);
      length.set(topic, (length.get(topic) ?? 0) + w);
      total += w;
    }
  };
  for (const w of training) {
    if (!w.primary) continue;
    add(w.primary, terms(w.title), 1);
    docs.set(w.primary, (docs.get(w.primary) ?? 0) + 1);
  }
  if (textWeight > 0)
    for (const t of taxonomy)
      add(
        shortId(t.id),
        terms([t.display_name, ...(t.keywords ?? []), t.description ?? ''].join(' ')),
        textWeight,
      );
  return (q, mu = 1000, prior = 1.5) => {
    const ts = [...new Set(terms(q))].filter((t) => corpus.has(t));
    const out = new Map();
    const scores = [];
    let best = Number.NEGATIVE_INFINITY;
    for (const [topic, m] of byTopic) {
      if (!ts.some((t) => m.has(t))) continue;
      let s = prior * Math.log((docs.get(topic) ?? 0) + 1);
      for (const t of ts) {
        const p = corpus.get(t) / total;
        s += Math.log(((m.get(t) ?? 0) + mu * p) / (length.get(topic) + mu)) - Math.log(p);
      }
      scores.push([topic, s]);
      best = Math.max(best, s);
    }
    let z = 0;
    for (const [, s] of scores) z += Math.exp(s - best);
    for (const [t, s] of scores) out.set(t, Math.exp(s - best) / z);
    return out;
  };
}

function perceptron(epochs = 5) {
  const feats = (s) => {
    const ts = terms(s);
    const f = new Set(ts);
    for (let i = 1; i < ts.length; i++) f.add(`${ts[i - 1]} ${ts[i]}`);
    return [...f];
  };
  const w = new Map();
  const u = new Map();
  let c = 1;
  const score = (f, m) => {
    const s = new Map();
    for (const x of f) for (const [t, v] of m.get(x) ?? []) s.set(t, (s.get(t) ?? 0) + v);
    return s;
  };
  const update = (f, t, d) => {
    for (const x of f) {
      if (!w.has(x)) {
        w.set(x, new Map());
        u.set(x, new Map());
      }
      w.get(x).set(t, (w.get(x).get(t) ?? 0) + d);
      u.get(x).set(t, (u.get(x).get(t) ?? 0) + c * d);
    }
  };
  const data = training.filter((x) => x.primary).map((x) => ({ f: feats(x.title), y: x.primary }));
  for (let e = 0; e < epochs; e++) {
    for (let i = data.length - 1; i > 0; i--) {
      const j = hash(`${e} ${i}`) % (i + 1);
      [data[i], data[j]] = [data[j], data[i]];
    }
    for (const { f, y } of data) {
      const s = score(f, w);
      let wrong = null;
      let best = Number.NEGATIVE_INFINITY;
      for (const [t, v] of s) if (t !== y && v > best) [wrong, best] = [t, v];
      if (wrong === null || best >= (s.get(y) ?? 0) - 1) {
        update(f, y, 1);
        if (wrong !== null) update(f, wrong, -1);
      }
      c++;
    }
  }
  const averaged = new Map();
  for (const [x, m] of w) averaged.set(x, new Map([...m].map(([t, v]) => [t, v - u.get(x).get(t) / c])));
  return (q) => score(feats(q), averaged);
}

const shortened = (title) => {
  const words = [...new Set(tokens(title).filter((t) => !STOP.has(t) && t.length > 1 && !/^\d+$/.test(t)))];
  const chosen = new Set(
    [...words]
      .sort((a, b) => plain.idf(b) - plain.idf(a) || a.localeCompare(b))
      .slice(0, 3)
      .filter((t) => plain.postings.has(t)),
  );
  return words.filter((t) => chosen.has(t)).join(' ');
};
const questions = [];
for (const w of heldOut) {
  if (!w.primary || !w.title.trim()) continue;
  if ((hash(`part ${w.id}`) % 2 === 0 ? 'tuning' : 'held-back') !== part) continue;
  questions.push({ kind: 'title', q: w.title, expected: w.primary });
  const s = shortened(w.title);
  if (s) questions.push({ kind: 'short', q: s, expected: w.primary });
}
const mrr = (rank) => {
  const by = {};
  for (const { kind, q, expected } of questions) {
    const i = rank(q).indexOf(expected);
    by[kind] = [...(by[kind] ?? []), i < 0 ? 0 : 1 / (i + 1)];
  }
  return Object.fromEntries(Object.entries(by).map(([k, v]) => [k, v.reduce((a, b) => a + b, 0) / v.length]));
};
const nb = naiveBayes(0);
const nbTexts = naiveBayes(3);
const combined = (model) => (q) => {
  const out = knn(q);
  for (const [t, p] of model(q)) out.set(t, (out.get(t) ?? 0) + p);
  return sorted(out);
};
const perceptronRank = perceptron();
const base = mrr(baseline);
const rows = {
  'bm25 top-10 vote (the baseline)': base,
  'knn (K 30, squared)': mrr((q) => sorted(knn(q))),
  'naive Bayes': mrr((q) => sorted(nb(q))),
  'knn + naive Bayes': mrr(combined(nb)),
  'knn + naive Bayes with topic texts': mrr(combined(nbTexts)),
  'averaged perceptron (words, pairs)': mrr((q) => sorted(perceptronRank(q))),
};
console.log(`${part} part: MRR of the primary topic (and / the baseline), ${questions.length} questions`);
for (const [name, r] of Object.entries(rows))
  console.log(
    `${name.padEnd(38)} ${Object.entries(r)
      .map(([k, v]) => `${k} ${v.toFixed(3)} (${(v / base[k]).toFixed(2)}x)`)
      .join('  ')}`,
  );
