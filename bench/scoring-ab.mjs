#!/usr/bin/env node
// A/B of the scoring alone (scoreSubjects) between two compiled builds, in one process: the corpus
// is loaded once (with A's code) and scored by A and B in turn, alternating which goes first, so
// both meet the same memory and machine. Prints each run's seconds and a hash of everything it
// scored (the subjects' rows and the ranking positions): the two must match when a change is
// meant to give the same scores.
//   node bench/scoring-ab.mjs A_DIST B_DIST CORPUS_DUCKDB   (ROUNDS=4; e.g. a copy of
//   .bench/data-1000000/corpus.duckdb, and dist/ of two checkouts)
import { createHash } from 'node:crypto';
import { resolve } from 'node:path';

const [aDir, bDir, store] = process.argv.slice(2).map((p) => resolve(p));
if (!store) throw new Error('usage: node bench/scoring-ab.mjs A_DIST B_DIST CORPUS_DUCKDB');
const load = (dir) => import(`${dir}/snapshot-build/score-subjects.js`);
const { openCorpusStore } = await import(`${aDir}/ingest/corpus-store.js`);
const { loadCorpusReporting } = await import(`${aDir}/scoring/corpus.js`);
const { computeImpact } = await import(`${aDir}/scoring/impact.js`);
const { DEFAULT_PARAMETERS } = await import(`${aDir}/scoring/parameters.js`);
const A = await load(aDir);
const B = await load(bDir);

const corpusStore = await openCorpusStore(store);
const started = performance.now();
const { corpus } = await loadCorpusReporting(corpusStore, DEFAULT_PARAMETERS, null);
corpusStore.close();
console.log(`loaded ${corpus.n} works in ${((performance.now() - started) / 1000).toFixed(1)} s`);
const impact = computeImpact(corpus, DEFAULT_PARAMETERS);

// The subjects' rows of every type (handed to a callback a type at a time; builds before
// 2026-11-26 afternoon returned them as scored.subjects), then the ranking positions.
function digest(scored, handed) {
  const hash = createHash('sha256');
  for (const rows of scored.subjects ? [scored.subjects] : handed)
    for (const [key, value] of Object.entries(rows)) {
      hash.update(key);
      if (ArrayBuffer.isView(value))
        hash.update(new Uint8Array(value.buffer, value.byteOffset, value.byteLength));
      else if (Array.isArray(value) && ArrayBuffer.isView(value[0]))
        for (const v of value) hash.update(new Uint8Array(v.buffer, v.byteOffset, v.byteLength));
      else hash.update(JSON.stringify(value));
    }
  hash.update(new Uint8Array(scored.rankPosition.buffer));
  return hash.digest('hex').slice(0, 16);
}

for (let round = 0; round < Number(process.env.ROUNDS ?? 4); round++) {
  const pair =
    round % 2
      ? [
          ['B', B],
          ['A', A],
        ]
      : [
          ['A', A],
          ['B', B],
        ];
  for (const [name, code] of pair) {
    const t = performance.now();
    const handed = [];
    const scored = code.scoreSubjects(corpus, impact, DEFAULT_PARAMETERS, (rows) => handed.push(rows));
    const seconds = (performance.now() - t) / 1000;
    console.log(`${name} ${seconds.toFixed(2)} s  output ${digest(scored, handed)}`);
  }
}
