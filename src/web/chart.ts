import { type Html, html, raw } from './html.js';
import { risText } from './numbers.js';

/**
 * A line chart as server-side SVG (readable without JavaScript): one series over labelled
 * periods, a y axis from 0, gridlines, the values on hover via <title>, and a caption. A last
 * period still open at the data's cut-off (`partialTo`: its last day) is drawn dashed with a
 * hollow dot and named in the caption, so it does not read as a fall.
 */
export function lineChart(
  points: readonly { label: string; value: number }[],
  options: { title: string; unit: string; max?: number; partialTo?: string; format?: (v: number) => string },
): Html {
  const W = 720;
  const H = 240;
  // Room for the axis labels at the larger size a phone's stylesheet gives them.
  const pad = { left: 64, right: 24, top: 24, bottom: 40 };
  const innerW = W - pad.left - pad.right;
  const innerH = H - pad.top - pad.bottom;
  const top = options.max ?? niceMax(Math.max(0, ...points.map((p) => p.value)));
  const x = (i: number) => pad.left + (points.length <= 1 ? innerW / 2 : (i * innerW) / (points.length - 1));
  const y = (v: number) => pad.top + innerH - (top === 0 ? 0 : (v / top) * innerH);
  const ticks = [0, 0.25, 0.5, 0.75, 1].map((f) => f * top);
  const every = Math.max(1, Math.ceil(points.length / 8));
  const format = options.format ?? tick;
  const partial = options.partialTo !== undefined && points.length > 0;
  const solid = partial ? points.slice(0, -1) : points;
  const path = solid
    .map((p, i) => `${i === 0 ? 'M' : 'L'}${x(i).toFixed(1)},${y(p.value).toFixed(1)}`)
    .join(' ');
  const n = points.length - 1;
  const open =
    partial && n > 0
      ? `<path d="M${x(n - 1).toFixed(1)},${y(points[n - 1]!.value).toFixed(1)} L${x(n).toFixed(1)},${y(points[n]!.value).toFixed(1)}" fill="none" stroke="#0b5cad" stroke-width="2" stroke-dasharray="5 4"/>`
      : '';
  const grid = ticks
    .map(
      (t) =>
        `<line x1="${pad.left}" x2="${W - pad.right}" y1="${y(t).toFixed(1)}" y2="${y(t).toFixed(1)}" stroke="#d0d7de"/>` +
        `<text x="${pad.left - 6}" y="${(y(t) + 4).toFixed(1)}" text-anchor="end" font-size="14" fill="#57606a">${tick(t)}</text>`,
    )
    .join('');
  // Every `every`-th period and the last, none too close to the last; every other one is
  // "minor", which a phone's stylesheet hides (its labels are drawn larger there).
  const labels = points
    .map((p, i) => {
      const last = i === points.length - 1;
      if (!last && (i % every !== 0 || points.length - 1 - i < every / 2 + 0.5)) return '';
      const minor = !last && i !== 0 && (i / every) % 2 === 1 ? ' class="minor"' : '';
      const anchor = points.length > 1 && i === 0 ? 'start' : points.length > 1 && last ? 'end' : 'middle';
      return `<text${minor} x="${x(i).toFixed(1)}" y="${H - 12}" text-anchor="${anchor}" font-size="14" fill="#57606a">${escText(p.label)}${partial && last ? '*' : ''}</text>`;
    })
    .join('');
  const dots = points
    .map(
      (p, i) =>
        `<circle cx="${x(i).toFixed(1)}" cy="${y(p.value).toFixed(1)}" r="3" ${partial && i === n ? 'fill="#fff" stroke="#0b5cad" stroke-width="2"' : 'fill="#0b5cad"'}><title>${escText(p.label)}${partial && i === n ? ` (to ${escText(options.partialTo!)})` : ''}: ${format(p.value)} ${escText(options.unit)}</title></circle>`,
    )
    .join('');
  return html`<figure>
<svg class="chart" viewBox="0 0 ${W} ${H}" role="img" aria-label="${options.title}">${raw(grid)}${raw(labels)}<path d="${path}" fill="none" stroke="#0b5cad" stroke-width="2"/>${raw(open)}${raw(dots)}</svg>
<figcaption>${options.title}${partial ? html` <span class="muted">(*${points[n]!.label}: papers to ${options.partialTo!} only, a partial period, dashed)</span>` : html``}</figcaption>
</figure>`;
}

function niceMax(v: number): number {
  if (v <= 0) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 2.5, 5, 10]) if (v <= m * p) return m * p;
  return 10 * p;
}

/**
 * An axis tick as short as it can be (0, 25, 2.5, 0.625, 1,875): ticks are quarters of a round
 * number, exact in four significant digits.
 */
function tick(v: number): string {
  return Number(v.toPrecision(4)).toLocaleString('en', { maximumFractionDigits: 20 });
}

function escText(s: string): string {
  return s.replace(/[&<>]/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : '&gt;'));
}

/**
 * The last day of a yearly series' open period: the data's cut-off day when the last year shown
 * is the cut-off's year and the cut-off is not its last day; undefined when every year is whole.
 */
export function openYearTo(
  series: readonly { period: string }[],
  cutoff: string | null | undefined,
): string | undefined {
  const last = series[series.length - 1]?.period;
  if (!cutoff || !last || !cutoff.startsWith(`${last}-`) || cutoff.endsWith('-12-31')) return undefined;
  return cutoff;
}

/**
 * A yearly history's chart of one metric, a point per year, the year open at the data's
 * cut-off (`cutoff`, YYYY-MM-DD) drawn as partial; nothing when there is no history.
 */
export function historyChart<P extends { period: string }>(
  series: readonly P[],
  value: (point: P) => number,
  options: {
    title: string;
    unit: string;
    max?: number;
    cutoff?: string | null;
    format?: (v: number) => string;
  },
): Html {
  const { cutoff, ...rest } = options;
  const partialTo = openYearTo(series, cutoff);
  return series.length > 0
    ? lineChart(
        series.map((p) => ({ label: p.period, value: value(p) })),
        { ...rest, ...(partialTo ? { partialTo } : {}) },
      )
    : html``;
}

/** RIS by year (0-100), as the element and subject pages show it. */
export const risByYear = (
  name: string,
  series: readonly { period: string; ris: number }[],
  cutoff?: string | null,
): Html =>
  historyChart(series, (p) => p.ris, {
    title: `${name}: RIS by year`,
    unit: 'RIS',
    max: 100,
    cutoff,
    format: risText,
  });
