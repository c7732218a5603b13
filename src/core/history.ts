import type { HistoryPoint } from '../contracts/common.js';
import type { ElementHistoriesAnswer, ElementHistoryAnswer } from '../contracts/elements.js';
import type { SubjectHistoryAnswer } from '../contracts/subjects.js';
import type { Resolution } from '../scoring/resolutions.js';
import type { HistoryQueries, SnapshotView, SubjectQueries } from '../snapshot/reader.js';
import { mostThatFit, RESULT_TOKENS, withinBudget } from './answer-size.js';
import { answerText } from './answer-text.js';
import { canonicalSymbol } from './elements.js';
import { ServiceError } from './errors.js';
import { type HistoryRange, historyRange, periodIndex, rangeText, selectPeriods } from './history-range.js';
import { HISTORY_NOTES } from './notes.js';
import { findSubject, type SubjectType } from './subjects.js';
import { envelope, subjectPath, type Viewer } from './viewer.js';

type HistoryView = SnapshotView<HistoryQueries & SubjectQueries>;

export function readSeries(
  snapshot: SnapshotView<HistoryQueries>,
  type: 'element' | SubjectType,
  id: string,
  resolution: Resolution,
  viewer: Viewer,
): HistoryPoint[] {
  const s = snapshot.reader.series(type, id, resolution);
  if (s === undefined || s.period.length === 0) return [];
  const stored = new Map(s.period.map((period, i) => [period, i]));
  const current = periodOfDay(String(snapshot.meta.cutoff_date ?? ''), resolution);
  const last = s.period[s.period.length - 1]!;
  const highImpact = corpusHighImpact(snapshot, resolution);
  // Contiguous: every period from the first with a paper to the current one; the snapshot keeps
  // only periods with papers, so the others are filled in with zeros here.
  const end =
    current !== '' && periodIndex(current, resolution) > periodIndex(last, resolution) ? current : last;
  return periodsBetween(s.period[0]!, end, resolution).map((period) => {
    const i = stored.get(period);
    if (i === undefined) {
      // HRI of no papers is 0 where the corpus had high-impact papers that period, else undefined (null).
      const hri = viewer.hriAvailable && (highImpact.get(period) ?? 0) > 0 ? 0 : null;
      return { period, ri: 0, ris: 0, hri, papers: 0 };
    }
    return {
      period,
      ri: s.ri[i]!,
      ris: s.ris[i]!,
      hri: viewer.hriAvailable ? (s.hri[i] ?? null) : null,
      papers: s.papers[i]!,
    };
  });
}

/** The corpus's high-impact papers per period of a resolution, read once per snapshot. */
function corpusHighImpact(
  snapshot: SnapshotView<HistoryQueries>,
  resolution: Resolution,
): Map<string, number> {
  return snapshot.memoize(
    `history:high-impact:${resolution}`,
    () => new Map(snapshot.reader.highImpactByPeriod(resolution)),
  );
}

/** The label of the period a day (YYYY-MM-DD) falls in: 2024, 2024-03 or 2024-03-05. */
export function periodOfDay(day: string, resolution: Resolution): string {
  return resolution === 'yearly' ? day.slice(0, 4) : resolution === 'monthly' ? day.slice(0, 7) : day;
}

/** Every period label from `first` to `last`, both included, oldest first. */
export function periodsBetween(first: string, last: string, resolution: Resolution): string[] {
  const out: string[] = [];
  const pad = (n: number, width = 2) => String(n).padStart(width, '0');
  if (resolution === 'yearly') {
    for (let y = Number(first); y <= Number(last); y++) out.push(String(y));
  } else if (resolution === 'monthly') {
    let [y, m] = first.split('-').map(Number) as [number, number];
    const [ly, lm] = last.split('-').map(Number) as [number, number];
    while (y < ly || (y === ly && m <= lm)) {
      out.push(`${pad(y, 4)}-${pad(m)}`);
      if (++m > 12) [y, m] = [y + 1, 1];
    }
  } else {
    const end = Date.parse(`${last}T00:00:00Z`);
    for (let t = Date.parse(`${first}T00:00:00Z`); t <= end; t += 86_400_000) {
      out.push(new Date(t).toISOString().slice(0, 10));
    }
  }
  return out;
}

/**
 * An element's history at a resolution (yearly, monthly or daily): all of it, or the periods a
 * range selects (from, to, last: history-range.ts).
 */
export function elementHistory(
  snapshot: HistoryView,
  symbol: string,
  resolution: Resolution,
  viewer: Viewer,
  range: HistoryRange = {},
): ElementHistoryAnswer {
  historyRange(resolution, range);
  const canonical = canonicalSymbol(symbol);
  const whole = readSeries(snapshot, 'element', canonical, resolution, viewer);
  const series = selectPeriods(whole, range, resolution);
  return {
    symbol: canonical,
    resolution,
    series,
    ...envelope(snapshot, viewer, `/elements/${canonical}`, { history: HISTORY_NOTES }, [
      [
        series,
        () =>
          `series is empty: ${whole.length === 0 ? noElementPaper([canonical]) : outsideRange(whole, range)}`,
      ],
    ]),
  };
}

/** Why an element's history has no period: no dated paper of the corpus names it. */
function noElementPaper(symbols: readonly string[]): string {
  return (
    `no paper of this corpus with a publication year names ${symbols.length > 1 ? 'any of ' : ''}${symbols.join(', ')} in its title (a paper ` +
    'counts only for the elements its title names), so there is no period to show.'
  );
}

/** Why a history that has periods answers none: the range asked holds none of them. */
function outsideRange(whole: readonly HistoryPoint[], range: HistoryRange): string {
  return `the range asked (${rangeText(range)}) holds none of its periods, which run from ${whole[0]!.period} to ${whole[whole.length - 1]!.period}.`;
}

/**
 * Elements one batch of histories may name: a daily history from an early paper runs to over
 * 20,000 periods (1.4 MB of JSON), so a batch is held to what one answer can carry.
 */
export const MAX_HISTORY_BATCH = 20;

/**
 * Several elements' histories at one resolution, in the order of the symbols (see batchSymbols),
 * each narrowed by the same range.
 */
export function elementHistories(
  snapshot: HistoryView,
  symbols: readonly string[],
  resolution: Resolution,
  viewer: Viewer,
  range: HistoryRange = {},
): ElementHistoriesAnswer {
  historyRange(resolution, range);
  const wholes = symbols.map((s) => {
    const symbol = canonicalSymbol(s);
    return { symbol, whole: readSeries(snapshot, 'element', symbol, resolution, viewer) };
  });
  const histories = wholes.map(({ symbol, whole }) => ({
    symbol,
    series: selectPeriods(whole, range, resolution),
  }));
  // One reason for all the elements whose series is empty (the batch itself never is): no paper,
  // or none of their periods in the range asked.
  const none = wholes.filter((h) => h.whole.length === 0).map((h) => h.symbol);
  const outside = histories
    .filter((h, i) => h.series.length === 0 && wholes[i]!.whole.length > 0)
    .map((h) => h.symbol);
  const reasons = [
    ...(none.length > 0 ? [`series is empty for ${none.join(', ')}: ${noElementPaper(none)}`] : []),
    ...(outside.length > 0
      ? [
          `series is empty for ${outside.join(', ')}: the range asked (${rangeText(range)}) holds none of their periods.`,
        ]
      : []),
  ];
  const empty = reasons.length > 0 ? reasons.join(' ') : undefined;
  return {
    resolution,
    count: histories.length,
    histories,
    ...envelope(snapshot, viewer, '/elements', { history: HISTORY_NOTES, ...(empty ? { empty } : {}) }),
  };
}

/** A topic's or keyword's history (yearly or monthly; daily is for elements only), all or a range of it. */
export function subjectHistory(
  snapshot: HistoryView,
  type: SubjectType,
  id: string,
  resolution: Resolution,
  viewer: Viewer,
  range: HistoryRange = {},
): SubjectHistoryAnswer {
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
  historyRange(resolution, range);
  const subject = findSubject(snapshot, type, id);
  const whole = readSeries(snapshot, type, subject.id, resolution, viewer);
  const series = selectPeriods(whole, range, resolution);
  return {
    subject_type: type,
    subject_id: subject.id,
    name: subject.name,
    resolution,
    series,
    ...envelope(snapshot, viewer, subjectPath(type, subject.id), { history: HISTORY_NOTES }, [
      [
        series,
        () =>
          whole.length === 0
            ? `series is empty: no paper of this corpus with a publication year has '${subject.name}' as a headline ${type}, so there is no period to show.`
            : `series is empty: ${outsideRange(whole, range)}`,
      ],
    ]),
  };
}

type HistoryAnswer = ElementHistoryAnswer | ElementHistoriesAnswer | SubjectHistoryAnswer;

/** Each series of a history answer (one, or one per element of a batch). */
function seriesOf(answer: HistoryAnswer): HistoryPoint[][] {
  return 'histories' in answer ? answer.histories.map((h) => h.series) : [answer.series];
}

/**
 * The fewest estimated tokens a period of a history costs in a result's text: its label and the
 * four cells after it are at least one piece each (answer-size.ts).
 */
const MIN_PERIOD_TOKENS = 5;

/** How to ask for what a result leaves out: the call's arguments, and the REST URL of the whole answer. */
export interface AskAgain {
  /** The call's arguments as parsed (symbol or symbols or subject, resolution, range, data_version). */
  args: Record<string, unknown>;
  /** The whole answer: the REST URL of the same call, at the answer's data version. */
  url: string;
}

/**
 * A history answer held to what a model's context can take (`budget` estimated tokens of its text,
 * answer-size.ts): unchanged when it fits; else each series keeps its most recent periods, as many
 * as fit (the same number for every series of a batch, which all end at the same period), and
 * notes.left_out says how many older periods are left out, the arguments that get them (the same
 * call with `to`, pinned to the answer's data version) and the URL of the whole answer.
 */
export function fitHistory<T extends HistoryAnswer>(answer: T, again: AskAgain, budget = RESULT_TOKENS): T {
  const longest = Math.max(0, ...seriesOf(answer).map((s) => s.length));
  const most = Math.floor(budget / MIN_PERIOD_TOKENS);
  const fits = (a: T) => withinBudget(answerText(a), budget);
  // Past `most` periods an answer cannot fit, and is not written out whole to find that out.
  if (longest <= 1 || (longest <= most && fits(answer))) return answer;
  // The most periods per series that fit, at least one (a batch's heads alone never pass the budget).
  const kept = mostThatFit(1, Math.min(longest - 1, most), (n) => fits(mostRecent(answer, n, again, budget)));
  return mostRecent(answer, kept, again, budget);
}

/** The answer with each series cut to its `kept` most recent periods, and the note that says so. */
function mostRecent<T extends HistoryAnswer>(answer: T, kept: number, again: AskAgain, budget: number): T {
  const cut = (series: HistoryPoint[]) => series.slice(Math.max(0, series.length - kept));
  const all = seriesOf(answer);
  // The last period left out: the same in every series cut (they end at the same period).
  const longest = all.reduce((a, b) => (b.length > a.length ? b : a));
  const to = longest[longest.length - kept - 1]!.period;
  const last = again.args.last;
  const rest = {
    ...again.args,
    to,
    ...(typeof last === 'number' ? { last: last - kept } : {}),
    data_version: answer.data_version,
  };
  const count = (n: number) => n.toLocaleString('en-US');
  const what =
    'histories' in answer
      ? `The periods up to ${to} are left out (${answer.histories
          .filter((h) => h.series.length > kept)
          .map((h) => `${h.symbol} ${count(h.series.length - kept)}`)
          .join(', ')})`
      : `The ${count(longest.length - kept)} oldest periods (${longest[0]!.period} to ${to}) are left out`;
  const left_out =
    `${what}: a result holds about ${count(budget)} tokens and keeps the most recent periods that fit. ` +
    `For them, call again with ${JSON.stringify(rest)}. The whole answer: ${again.url} (add &format=csv for CSV).`;
  const notes = { ...answer.notes, left_out };
  return (
    'histories' in answer
      ? { ...answer, histories: answer.histories.map((h) => ({ ...h, series: cut(h.series) })), notes }
      : { ...answer, series: cut(answer.series), notes }
  ) as T;
}
