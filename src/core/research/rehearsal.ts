import type { PaperQueries, ResearchQueries, SnapshotView } from '../../snapshot/reader.js';
import { ServiceError } from '../errors.js';
import { research } from '../research.js';
import type { Viewer } from '../viewer.js';
import { LENSES } from './request.js';

/**
 * A worker's rehearsal of research after a snapshot is published: questions of every shape
 * (a few words, a community's name, words of two communities, a paper's title, a paper by DOI)
 * asked and thrown away, so that V8 has compiled research's code before the first real
 * questions come. Without it the first few dozen questions each paid tens of milliseconds of
 * compilation on a 2-core machine (at 1M works about twice the research thread's own CPU).
 * The questions come from the snapshot itself (its largest communities and a few papers), so
 * they match whatever corpus is served.
 */

/** Communities whose names make the questions (four each). */
const COMMUNITIES = 12;
/** Papers whose titles, and DOIs, are asked. */
const PAPERS = 4;

const viewer: Viewer = { hriAvailable: true, publicUrl: 'http://localhost' };

/** The words of a name worth asking (letters only, four or more). */
function wordsOf(name: string): string[] {
  const out: string[] = [];
  for (const w of name.toLowerCase().split(/[^a-z]+/)) if (w.length >= 4) out.push(w);
  return out;
}

/** The rehearsal's questions for a snapshot: deterministic, and the same for every worker. */
export function rehearsalQuestions(
  reader: Pick<ResearchQueries, 'communitySizes' | 'community'> & Pick<PaperQueries, 'paperRows'>,
  papers: number,
): { q?: string; paper?: string }[] {
  const largest = [...reader.communitySizes()]
    .sort((a, b) => b[1] - a[1] || a[0] - b[0])
    .slice(0, COMMUNITIES)
    .map(([topic]) => reader.community(`T${topic}`)?.name ?? '')
    .filter((name) => wordsOf(name).length > 0);
  const out: { q?: string; paper?: string }[] = [];
  largest.forEach((name, i) => {
    const words = wordsOf(name);
    const next = wordsOf(largest[(i + 1) % largest.length]!);
    out.push({ q: name }, { q: words.slice(0, 2).join(' ') }, { q: `${words.at(-1)} ${next[0]}` });
    out.push({ q: `${words[0]} copper` });
  });
  const ordinals: number[] = [];
  for (let i = 1; i <= PAPERS; i++) ordinals.push(Math.floor((papers * i) / (PAPERS + 1)));
  for (const p of reader.paperRows(ordinals)) {
    if (p.title) out.push({ q: p.title });
    if (p.doi) out.push({ paper: p.doi });
  }
  return out;
}

/**
 * Asks the rehearsal's question number `index`: 'ready' when there is none left, 'later' while
 * the titles' statistics are still being read (a rehearsal before them would compile the other
 * ranking), else 'asked'. Its answer, or its refusal, is dropped.
 */
export function rehearse(
  snapshot: SnapshotView<ResearchQueries & PaperQueries>,
  index: number,
): 'asked' | 'later' | 'ready' {
  const papers = Number(snapshot.meta.corpus_papers ?? 0);
  const questions = snapshot.memoize('research-rehearsal', () => rehearsalQuestions(snapshot.reader, papers));
  if (index >= questions.length) return 'ready';
  if (snapshot.reader.titleRankingPending()) return 'later';
  const question = questions[index]!;
  try {
    research(snapshot, { ...question, pageSize: 10, lenses: [...LENSES], page: 1 + (index % 2) }, viewer);
  } catch (e) {
    if (!(e instanceof ServiceError)) throw e;
  }
  return 'asked';
}
