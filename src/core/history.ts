import type { Snapshot } from '../snapshot/snapshot.js';
import { canonicalSymbol } from './elements.js';
import { ServiceError } from './errors.js';
import { HISTORY_NOTES } from './notes.js';
import { findSubject, type SubjectType } from './subjects.js';
import { type Envelope, envelope, type Viewer } from './viewer.js';

export type Resolution = 'yearly' | 'monthly' | 'daily';

export interface HistoryPoint {
  period: string;
  ri: number;
  ris: number;
  hri: number | null;
  papers: number;
}

export interface HistoryAnswer extends Envelope {
  resolution: Resolution;
  series: HistoryPoint[];
}

interface StoredSeries {
  period: string[];
  papers: number[];
  ri: number[];
  ris: number[];
  hri: (number | null)[];
}

function readSeries(
  snapshot: Snapshot,
  type: string,
  id: string,
  resolution: Resolution,
  viewer: Viewer,
): HistoryPoint[] {
  const json = snapshot.db
    .prepare('SELECT series FROM history WHERE type = ? AND id = ? AND resolution = ?')
    .pluck()
    .get(type, id, resolution) as string | undefined;
  if (json === undefined) return [];
  const s = JSON.parse(json) as StoredSeries;
  return s.period.map((period, i) => ({
    period,
    ri: s.ri[i]!,
    ris: s.ris[i]!,
    hri: viewer.hriAvailable ? (s.hri[i] ?? null) : null,
    papers: s.papers[i]!,
  }));
}

/** An element's full history at a resolution (yearly, monthly or daily). */
export function elementHistory(
  snapshot: Snapshot,
  symbol: string,
  resolution: Resolution,
  viewer: Viewer,
): HistoryAnswer & { symbol: string } {
  const canonical = canonicalSymbol(symbol);
  return {
    symbol: canonical,
    resolution,
    series: readSeries(snapshot, 'element', canonical, resolution, viewer),
    ...envelope(snapshot, viewer, `/elements/${canonical}`, { history: HISTORY_NOTES }),
  };
}

/** A topic's or keyword's full history (yearly or monthly; daily is for elements only). */
export function subjectHistory(
  snapshot: Snapshot,
  type: SubjectType,
  id: string,
  resolution: Resolution,
  viewer: Viewer,
): HistoryAnswer & { subject_type: SubjectType; subject_id: string; name: string } {
  if (resolution === 'daily') {
    throw new ServiceError(
      'invalid_parameter',
      "Parameter 'resolution': daily history exists for elements only.",
      {
        parameter: 'resolution',
        allowed: ['yearly', 'monthly'],
      },
    );
  }
  const subject = findSubject(snapshot, type, id);
  return {
    subject_type: type,
    subject_id: subject.id,
    name: subject.name,
    resolution,
    series: readSeries(snapshot, type, subject.id, resolution, viewer),
    ...envelope(snapshot, viewer, `/subjects/${type}/${subject.id}`, { history: HISTORY_NOTES }),
  };
}
