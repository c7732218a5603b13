import type { Notes } from '../contracts/common.js';
import type { SnapshotStamp } from '../snapshot/reader.js';
import { LAB_NOTES } from './lab.js';
import { HISTORY_NOTES, metricNotes, PAPER_NOTES } from './notes.js';
import { RESEARCH_PAPER_NOTES } from './research.js';
import { SUBJECT_SHARE_NOTES } from './subjects.js';
import { VERSIONS_CITE_NOTES } from './versions.js';
import type { Viewer } from './viewer.js';

/**
 * Every note an answer of one data version can carry that is the same for every answer (how to
 * read RI, RIS, HRI, paper lists, histories, the lab; the corpus; how to cite), by name. An agent
 * reads them once (the MCP notes resource) instead of in every result; what is left in a result is
 * what only that answer says (why a list is empty, why HRI is null for this caller).
 */
export type ReadingNotes = Record<string, string>;

function readingNotes(snapshot: SnapshotStamp, viewer: Viewer): ReadingNotes {
  const metrics = metricNotes(snapshot, {
    hriAvailable: true,
    upgradeUrl: `${viewer.publicUrl}/pricing`,
    edition: viewer.edition ?? 'full',
  });
  const full = (viewer.edition ?? 'full') === 'full';
  return {
    ...metrics,
    papers: PAPER_NOTES,
    // The older edition has no research and no lab: no answer of it carries their notes.
    ...(full ? { research_papers: RESEARCH_PAPER_NOTES } : {}),
    subject_elements: SUBJECT_SHARE_NOTES,
    history: HISTORY_NOTES,
    ...(full ? { lab: LAB_NOTES } : {}),
    versions: VERSIONS_CITE_NOTES,
  };
}

/**
 * The texts of a snapshot's readingNotes, made once per snapshot. readingNotes reads only the
 * viewer's public URL and edition (a server's own), so they name the memo and the plan does not.
 */
export function sharedNoteTexts(
  snapshot: SnapshotStamp & { memoize<M>(key: string, compute: () => M): M },
  viewer: Viewer,
): { notes: ReadingNotes; texts: ReadonlySet<string> } {
  return snapshot.memoize(`reading-notes ${viewer.publicUrl} ${viewer.edition ?? 'full'}`, () => {
    const notes = readingNotes(snapshot, viewer);
    return { notes, texts: new Set(Object.values(notes)) };
  });
}

/** Where an answer's shared notes are read: the MCP resource of its data version. */
export const NOTES_URI = 'research-intensity://notes/';

/** The answer with only its own notes, and where to read the rest (the notes resource of its version). */
export function withOwnNotes<T extends { notes?: Notes }>(
  answer: T,
  snapshot: SnapshotStamp & { version: string; memoize<M>(key: string, compute: () => M): M },
  viewer: Viewer,
): T {
  if (!answer.notes) return answer;
  const { texts } = sharedNoteTexts(snapshot, viewer);
  return { ...answer, notes: answerOwnNotes(answer.notes, texts, `${NOTES_URI}${snapshot.version}`) };
}

/**
 * An answer's notes without the shared ones (`shared`: the texts of readingNotes), plus where to
 * read them: `{ read: uri, ...what only this answer says }`.
 */
function answerOwnNotes(notes: Notes, shared: ReadonlySet<string>, uri: string): Record<string, string> {
  const own: Record<string, string> = { read: uri };
  for (const [key, text] of Object.entries(notes)) {
    if (typeof text === 'string' && !shared.has(text)) own[key] = text;
  }
  return own;
}
