import type { Kind } from '../access/policy.js';
import type { HistoryPoint } from '../contracts/common.js';
import type { SubjectType } from '../contracts/subjects.js';
import type { HistoryQueries, SnapshotView, SubjectQueries } from '../snapshot/reader.js';
import { canonicalSymbol, getElement } from './elements.js';
import { readSeries } from './history.js';
import { findSubject, getSubject } from './subjects.js';
import { subjectPath, type Viewer } from './viewer.js';

/**
 * Badges to embed in a page, a README or a slide: what an element's or subject's current RIS
 * badge and its yearly sparkline say, in words (title and description, for screen readers and
 * for whoever asks where a number came from) and in numbers. Made of the same answers as the
 * element, subject and history reads; the SVG is the front door's (http/routes/badges/svg.ts).
 */

type BadgesView = SnapshotView<HistoryQueries & SubjectQueries>;

export interface BadgeAnswer {
  /** What the badge names, as drawn (a long subject name shortened). */
  label: string;
  /** The score as drawn: "RIS 35.1". */
  value: string;
  /** Its accessible name, the data version in it. */
  title: string;
  description: string;
  /** The page the badge stands for (its canonical_url). */
  link: string;
  data_version: string;
}

export interface SparklineAnswer {
  label: string;
  title: string;
  description: string;
  link: string;
  data_version: string;
  /** The years drawn, oldest first, at most SPARKLINE_YEARS. */
  points: Pick<HistoryPoint, 'period' | 'ris'>[];
  /** The last year's last day when it is still open at the data's cut-off (drawn dashed). */
  partialTo: string | null;
}

/** The years a sparkline draws at most: the most recent, so that an old subject's image stays small. */
const SPARKLINE_YEARS = 30;

/** Characters of a name drawn on a badge; the whole name is in its title. */
const LABEL_CHARACTERS = 36;

const RIS_MEANING =
  'RIS, the research intensity score: 0-100, the share of recent papers about it, recency-weighted, on a log scale relative to the most-researched subject of its kind';

const ris = (v: number) => v.toFixed(1);

/** A name as drawn on a badge: whole up to LABEL_CHARACTERS, else cut at a character with an ellipsis. */
function labelOf(name: string): string {
  const chars = [...name];
  return chars.length <= LABEL_CHARACTERS ? name : `${chars.slice(0, LABEL_CHARACTERS - 1).join('')}…`;
}

const cutoffOf = (snapshot: BadgesView) => String(snapshot.meta.cutoff_date ?? '');

/** Where a badge was drawn from, as its description ends. */
function source(snapshot: BadgesView, link: string): string {
  const cutoff = cutoffOf(snapshot);
  return `Research Intensity data version ${snapshot.version}${cutoff ? `, papers to ${cutoff}` : ''}: ${link}`;
}

/** An element's current RIS badge (open, as its score is). */
export function elementBadge(snapshot: BadgesView, symbol: string, viewer: Viewer): BadgeAnswer {
  const e = getElement(snapshot, symbol, viewer);
  const who = `${e.name} (${e.symbol})`;
  return {
    label: `${e.symbol} research intensity`,
    value: `RIS ${ris(e.ris)}`,
    title: `${who}: RIS ${ris(e.ris)}, data version ${e.data_version}`,
    description: `${who}: RIS ${ris(e.ris)} of 100. ${RIS_MEANING}. ${source(snapshot, e.canonical_url)}`,
    link: e.canonical_url,
    data_version: e.data_version,
  };
}

/** A topic's or keyword's current RIS badge (as its scores, from Personal). */
export function subjectBadge(
  snapshot: BadgesView,
  type: SubjectType,
  id: string,
  viewer: Viewer,
): BadgeAnswer {
  const s = getSubject(snapshot, type, id, viewer);
  return {
    label: labelOf(s.name),
    value: `RIS ${ris(s.ris)}`,
    title: `${s.name} (${type}): RIS ${ris(s.ris)}, data version ${s.data_version}`,
    description: `${s.name}, a ${type}: RIS ${ris(s.ris)} of 100. ${RIS_MEANING}. ${source(snapshot, s.canonical_url)}`,
    link: s.canonical_url,
    data_version: s.data_version,
  };
}

/** An element's yearly RIS as a sparkline. */
export function elementSparkline(snapshot: BadgesView, symbol: string, viewer: Viewer): SparklineAnswer {
  const canonical = canonicalSymbol(symbol);
  const e = getElement(snapshot, canonical, viewer);
  const series = readSeries(snapshot, 'element', canonical, 'yearly', viewer);
  return sparklineOf(snapshot, series, `${e.name} (${e.symbol})`, `${e.symbol} RIS by year`, e.canonical_url);
}

/** A topic's or keyword's yearly RIS as a sparkline. */
export function subjectSparkline(
  snapshot: BadgesView,
  type: SubjectType,
  id: string,
  viewer: Viewer,
): SparklineAnswer {
  const s = findSubject(snapshot, type, id);
  const series = readSeries(snapshot, type, s.id, 'yearly', viewer);
  const link = `${viewer.publicUrl}${subjectPath(type, s.id)}`;
  return sparklineOf(snapshot, series, `${s.name} (${type})`, labelOf(s.name), link);
}

function sparklineOf(
  snapshot: BadgesView,
  series: readonly HistoryPoint[],
  who: string,
  label: string,
  link: string,
): SparklineAnswer {
  const points = series.slice(-SPARKLINE_YEARS).map((p) => ({ period: p.period, ris: p.ris }));
  const cutoff = cutoffOf(snapshot);
  const last = points[points.length - 1]?.period;
  const partialTo =
    last !== undefined && cutoff.startsWith(`${last}-`) && !cutoff.endsWith('-12-31') ? cutoff : null;
  const span = points.length === 0 ? '' : `, ${points[0]!.period}-${last}`;
  const values =
    points.length === 0
      ? 'no paper of the corpus with a publication year names it, so there is no year to draw'
      : `${points.map((p) => `${p.period} ${ris(p.ris)}`).join(', ')}${partialTo ? ` (${last}: papers to ${partialTo} only, a partial year)` : ''}`;
  return {
    label,
    title: `${who}: RIS by year${span}, data version ${snapshot.version}`,
    description: `${who}, RIS by year: ${values}. ${RIS_MEANING}. ${source(snapshot, link)}`,
    link,
    data_version: snapshot.version,
    points,
    partialTo,
  };
}

/** An element's or subject's badge path, and its sparkline's, as the pages offer them to copy. */
export function badgePath(type: Kind, id: string, sparkline = false): string {
  const base =
    type === 'element' ? `/v1/badges/elements/${canonicalSymbol(id)}` : `/v1/badges${subjectPath(type, id)}`;
  return `${base}${sparkline ? '/history' : ''}.svg`;
}
