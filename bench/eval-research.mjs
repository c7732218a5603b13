#!/usr/bin/env node
// npm run eval:research: the relevance harness of the research search (issue 32). Works of the
// bundled sample are held out by a stable hash of their OpenAlex id (about 3%); the service's own
// ingest and build make a snapshot of the rest in a temp folder; each held-out work is asked as
// questions through the core research() and searchSubjects() with a Professional viewer:
//   title    its full title;
//   short    its three most informative title words (highest idf in the training titles, in the
//            title's order);
//   keyword  one keyword of its primary topic's taxonomy entry (topics.json), chosen by hash.
// The right community is the work's primary topic (soft: any of its topics). Reported per kind:
// communities hit@1/3/5 and MRR; the share of the `now` and `newest` papers whose topics include
// the right one; /v1/subjects/search's rank of the right topic (among its topic results). Beside
// each, a plain BM25 (k1 1.2, b 0.75, lower-case word tokens, no stemming) over the same training
// titles, computed in the same run: its top 10 papers vote with their topics (one vote a topic a
// paper, ties by summed score) to rank communities, and their share on the right topic is the
// lenses' baseline. Questions are split by hash into a tuning part and a held-back part, reported
// apart: tune on the first, check the second at the end.
// Usage: node bench/eval-research.mjs [--tuning-only] (needs the built dist/). Writes
// bench/results/eval-research-<date>.json.
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';

const root = resolve(import.meta.dirname, '..');
const dist = (p) => join(root, 'dist', p);
const { BUNDLED_SAMPLE } = await import(dist('config/paths.js'));
const { openCorpusStore } = await import(dist('ingest/corpus-store.js'));
const { ingest } = await import(dist('ingest/ingest.js'));
const { expandWorksPaths } = await import(dist('ingest/sources.js'));
const { readTaxonomy } = await import(dist('ingest/taxonomy.js'));
const { buildSnapshot } = await import(dist('snapshot-build/build-snapshot.js'));
const { snapshotFile } = await import(dist('snapshot/folder.js'));
const { Snapshot } = await import(dist('snapshot/snapshot.js'));
const { research, LENSES } = await import(dist('core/research.js'));
const { searchSubjects } = await import(dist('core/subjects.js'));

const tuningOnly = process.argv.includes('--tuning-only');
/** Per mille of the works held out, and the held-out questions' share in the held-back part. */
const HELD_OUT_PER_MILLE = 30;

/** A stable hash of a string: the first 8 hex digits of its SHA-256, as a number. */
const hash = (s) => Number.parseInt(createHash('sha256').update(s).digest('hex').slice(0, 8), 16);
const shortId = (url) => (url ? url.replace(/^https:\/\/openalex\.org\//, '') : null);

// The sample, its works split into training and held-out by the hash of their id.
const training = [];
const heldOut = [];
for (const file of BUNDLED_SAMPLE.works) {
  for (const line of gunzipSync(readFileSync(file)).toString('utf8').split('\n')) {
    if (!line.trim()) continue;
    const w = JSON.parse(line);
    const id = shortId(w.id);
    const h = hash(`held-out ${id}`);
    const record = {
      id,
      title: w.display_name ?? w.title ?? '',
      doi: w.doi ? w.doi.replace(/^https:\/\/doi\.org\//, '').toLowerCase() : null,
      primary: shortId(w.primary_topic?.id),
      topics: (w.topics ?? []).map((t) => shortId(t.id)),
      line,
    };
    if (h % 1000 < HELD_OUT_PER_MILLE) heldOut.push(record);
    else training.push(record);
  }
}
const taxonomy = JSON.parse(readFileSync(BUNDLED_SAMPLE.topics, 'utf8'));
const topicById = new Map(taxonomy.map((t) => [shortId(t.id), t]));

// The service's snapshot of the training works, made by its own ingest and build.
const dir = join(tmpdir(), `ri-eval-research-${process.pid}`);
rmSync(dir, { recursive: true, force: true });
mkdirSync(join(dir, 'works'), { recursive: true });
const worksFile = join(dir, 'works', 'training.jsonl.gz');
writeFileSync(worksFile, gzipSync(`${training.map((w) => w.line).join('\n')}\n`));
const corpus = join(dir, 'corpus.duckdb');
const store = await openCorpusStore(corpus);
await store.loadTaxonomy(readTaxonomy(BUNDLED_SAMPLE.topics));
store.close();
await ingest(corpus, expandWorksPaths([worksFile]));
const built = await buildSnapshot(corpus, join(dir, 'snapshots'));
const snapshot = new Snapshot(built.version, snapshotFile(join(dir, 'snapshots'), built.version));
const viewer = { hriAvailable: true, publicUrl: 'http://localhost' };

// Each training paper's topics, by DOI and by title (how a listed paper is recognised).
const topicsByKey = new Map();
const norm = (t) => (t ?? '').toLowerCase().replace(/\s+/g, ' ').trim();
for (const w of training) {
  if (w.doi) topicsByKey.set(`doi ${w.doi}`, w.topics);
  topicsByKey.set(`title ${norm(w.title)}`, w.topics);
}
const paperTopics = (p) =>
  (p.doi && topicsByKey.get(`doi ${p.doi.toLowerCase()}`)) ?? topicsByKey.get(`title ${norm(p.title)}`) ?? [];

// The plain BM25 baseline over the training titles.
const tokens = (s) => (s ?? '').toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
const K1 = 1.2;
const B = 0.75;
const postings = new Map();
const lengths = new Float64Array(training.length);
training.forEach((w, d) => {
  const ts = tokens(w.title);
  lengths[d] = ts.length;
  const tf = new Map();
  for (const t of ts) tf.set(t, (tf.get(t) ?? 0) + 1);
  for (const [t, f] of tf) {
    if (!postings.has(t)) postings.set(t, []);
    postings.get(t).push([d, f]);
  }
});
const N = training.length;
const avgdl = lengths.reduce((a, b) => a + b, 0) / N;
const idf = (t) => {
  const n = postings.get(t)?.length ?? 0;
  return Math.log(1 + (N - n + 0.5) / (n + 0.5));
};
function bm25Top(q, k) {
  const scores = new Map();
  for (const t of new Set(tokens(q))) {
    const w = idf(t);
    for (const [d, f] of postings.get(t) ?? []) {
      const s = (w * (f * (K1 + 1))) / (f + K1 * (1 - B + (B * lengths[d]) / avgdl));
      scores.set(d, (scores.get(d) ?? 0) + s);
    }
  }
  return [...scores]
    .sort((a, b) => b[1] - a[1] || a[0] - b[0])
    .slice(0, k)
    .map(([d, score]) => ({ work: training[d], score }));
}
function bm25Communities(top) {
  const votes = new Map();
  for (const { work, score } of top) {
    for (const t of work.topics) {
      const v = votes.get(t) ?? { n: 0, score: 0 };
      v.n++;
      v.score += score;
      votes.set(t, v);
    }
  }
  return [...votes]
    .sort((a, b) => b[1].n - a[1].n || b[1].score - a[1].score || a[0].localeCompare(b[0]))
    .map(([t]) => t);
}

// The questions: three kinds per held-out work.
const STOP = new Set([
  'a',
  'an',
  'and',
  'the',
  'of',
  'for',
  'in',
  'on',
  'to',
  'with',
  'by',
  'from',
  'at',
  'is',
]);
function shortened(title) {
  const words = [...new Set(tokens(title).filter((t) => !STOP.has(t) && t.length > 1 && !/^\d+$/.test(t)))];
  const chosen = new Set(
    [...words]
      .sort((a, b) => idf(b) - idf(a) || a.localeCompare(b))
      .slice(0, 3)
      .filter((t) => postings.has(t)),
  );
  return words.filter((t) => chosen.has(t)).join(' ');
}
const questions = [];
for (const w of heldOut) {
  if (!w.primary || !w.title.trim()) continue;
  const part = hash(`part ${w.id}`) % 2 === 0 ? 'tuning' : 'held-back';
  const base = { id: w.id, part, expected: w.primary, soft: w.topics };
  questions.push({ ...base, kind: 'title', q: w.title });
  const short = shortened(w.title);
  if (short) questions.push({ ...base, kind: 'short', q: short });
  const keywords = topicById.get(w.primary)?.keywords ?? [];
  if (keywords.length > 0)
    questions.push({ ...base, kind: 'keyword', q: keywords[hash(`keyword ${w.id}`) % keywords.length] });
}

const rankOf = (list, wanted) => {
  const i = list.findIndex((t) => wanted.includes(t));
  return i < 0 ? null : i + 1;
};
const shareOn = (topicsLists, expected) =>
  topicsLists.length === 0
    ? null
    : topicsLists.filter((ts) => ts.includes(expected)).length / topicsLists.length;

const started = performance.now();
const rows = [];
for (const q of questions) {
  let communities = [];
  let empty = 0;
  let now = [];
  let newest = [];
  let status = 'ok';
  try {
    const a = research(snapshot, { q: q.q, pageSize: 10, lenses: [...LENSES], page: 1 }, viewer);
    communities = a.communities.map((c) => c.subject_id);
    empty = a.communities.filter((c) => c.matching_papers === 0).length;
    now = (a.lists.now ?? []).map(paperTopics);
    newest = (a.lists.newest ?? []).map(paperTopics);
  } catch (e) {
    status = e.code ?? String(e.message);
  }
  let subjects = [];
  try {
    subjects = searchSubjects(snapshot, q.q, viewer)
      .results.filter((r) => r.subject_type === 'topic')
      .map((r) => r.subject_id);
  } catch {}
  const top = bm25Top(q.q, 10);
  const bm25 = bm25Communities(top);
  rows.push({
    ...q,
    status,
    service: {
      top: communities.slice(0, 3),
      rank: rankOf(communities, [q.expected]),
      soft_rank: rankOf(communities, q.soft),
      // A question answered 404 has lists with nothing on topic; an empty list otherwise is left out.
      now: status === 'ok' ? shareOn(now, q.expected) : 0,
      newest: status === 'ok' ? shareOn(newest, q.expected) : 0,
      subjects_rank: rankOf(subjects, [q.expected]),
      named: communities.length,
      empty,
    },
    bm25: {
      top: bm25.slice(0, 3),
      rank: rankOf(bm25, [q.expected]),
      soft_rank: rankOf(bm25, q.soft),
      top10: shareOn(
        top.map((t) => t.work.topics),
        q.expected,
      ),
    },
  });
}
const askMs = performance.now() - started;
snapshot.retire();
rmSync(dir, { recursive: true, force: true });

// The figures, per part and kind.
const mean = (xs) => {
  const v = xs.filter((x) => x !== null);
  return v.length === 0 ? null : v.reduce((a, b) => a + b, 0) / v.length;
};
const hit = (ranks, k) => mean(ranks.map((r) => (r !== null && r <= k ? 1 : 0)));
const mrr = (ranks) => mean(ranks.map((r) => (r === null ? 0 : 1 / r)));
function figures(set) {
  const s = set.map((r) => r.service);
  const b = set.map((r) => r.bm25);
  return {
    questions: set.length,
    nothing_matched: set.filter((r) => r.status === 'nothing_matched').length,
    service: {
      hit1: hit(
        s.map((x) => x.rank),
        1,
      ),
      hit3: hit(
        s.map((x) => x.rank),
        3,
      ),
      hit5: hit(
        s.map((x) => x.rank),
        5,
      ),
      mrr: mrr(s.map((x) => x.rank)),
      soft_hit1: hit(
        s.map((x) => x.soft_rank),
        1,
      ),
      soft_mrr: mrr(s.map((x) => x.soft_rank)),
      now_on_topic: mean(s.map((x) => x.now)),
      newest_on_topic: mean(s.map((x) => x.newest)),
      subjects_hit1: hit(
        s.map((x) => x.subjects_rank),
        1,
      ),
      subjects_mrr: mrr(s.map((x) => x.subjects_rank)),
      // Communities named per answer, and the share of them with no matching paper (issue 36).
      named: mean(s.map((x) => x.named)),
      empty_share:
        s.reduce((n, x) => n + x.empty, 0) /
        Math.max(
          1,
          s.reduce((n, x) => n + x.named, 0),
        ),
    },
    bm25: {
      hit1: hit(
        b.map((x) => x.rank),
        1,
      ),
      hit3: hit(
        b.map((x) => x.rank),
        3,
      ),
      hit5: hit(
        b.map((x) => x.rank),
        5,
      ),
      mrr: mrr(b.map((x) => x.rank)),
      soft_hit1: hit(
        b.map((x) => x.soft_rank),
        1,
      ),
      soft_mrr: mrr(b.map((x) => x.soft_rank)),
      top10_on_topic: mean(b.map((x) => x.top10)),
    },
  };
}
const KINDS = ['title', 'short', 'keyword'];
const PARTS = tuningOnly ? ['tuning'] : ['tuning', 'held-back'];
const results = {};
for (const part of PARTS) {
  results[part] = {};
  for (const kind of KINDS)
    results[part][kind] = figures(rows.filter((r) => r.part === part && r.kind === kind));
}

const f = (v) => (v === null ? '  -  ' : v.toFixed(3));
console.log(
  `eval:research  data ${built.version}  training works ${training.length}  held out ${heldOut.length}  questions ${rows.length}  (${Math.round(askMs)} ms asking)`,
);
for (const part of PARTS) {
  console.log(`\n== ${part} part ==  (service | bm25 top 10)`);
  console.log(
    'kind     n    404  hit@1        hit@3        hit@5        MRR          soft hit@1   now    newest | top10  subj hit@1 subj MRR  named  empty',
  );
  for (const kind of KINDS) {
    const { questions: n, nothing_matched, service: s, bm25: b } = results[part][kind];
    console.log(
      [
        kind.padEnd(8),
        String(n).padStart(4),
        String(nothing_matched).padStart(4),
        `${f(s.hit1)}|${f(b.hit1)}`,
        `${f(s.hit3)}|${f(b.hit3)}`,
        `${f(s.hit5)}|${f(b.hit5)}`,
        `${f(s.mrr)}|${f(b.mrr)}`,
        `${f(s.soft_hit1)}|${f(b.soft_hit1)}`,
        f(s.now_on_topic),
        `${f(s.newest_on_topic)} |`,
        f(b.top10_on_topic),
        `  ${f(s.subjects_hit1)}   `,
        f(s.subjects_mrr),
        ` ${s.named.toFixed(1).padStart(4)}`,
        f(s.empty_share),
      ].join(' '),
    );
  }
}

if (!tuningOnly || process.env.EVAL_DUMP) {
  const date = new Date().toISOString().slice(0, 10);
  mkdirSync(join(root, 'bench/results'), { recursive: true });
  // EVAL_DUMP=path: the results (of the parts shown) there instead.
  const out = process.env.EVAL_DUMP ?? join(root, 'bench/results', `eval-research-${date}.json`);
  writeFileSync(
    out,
    `${JSON.stringify(
      {
        date: new Date().toISOString(),
        data_version: built.version,
        training_works: training.length,
        held_out_works: heldOut.length,
        questions: rows.length,
        results,
        per_question: rows
          .filter((r) => PARTS.includes(r.part))
          .map(({ id, part, kind, q, expected, status, service, bm25 }) => ({
            id,
            part,
            kind,
            q,
            expected,
            status,
            service,
            bm25,
          })),
      },
      null,
      2,
    )}\n`,
  );
  console.log(`\nwrote ${out}`);
}
