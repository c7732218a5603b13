import { type Html, html, raw } from './html.js';

/**
 * A line chart as server-side SVG (readable without JavaScript): one series over labelled
 * periods, a y axis from 0, gridlines, the values on hover via <title>, and a caption.
 */
export function lineChart(
  points: readonly { label: string; value: number }[],
  options: { title: string; unit: string; max?: number },
): Html {
  const W = 720;
  const H = 240;
  const pad = { left: 48, right: 16, top: 24, bottom: 36 };
  const innerW = W - pad.left - pad.right;
  const innerH = H - pad.top - pad.bottom;
  const top = options.max ?? niceMax(Math.max(0, ...points.map((p) => p.value)));
  const x = (i: number) => pad.left + (points.length <= 1 ? innerW / 2 : (i * innerW) / (points.length - 1));
  const y = (v: number) => pad.top + innerH - (top === 0 ? 0 : (v / top) * innerH);
  const ticks = [0, 0.25, 0.5, 0.75, 1].map((f) => f * top);
  const every = Math.max(1, Math.ceil(points.length / 10));
  const path = points
    .map((p, i) => `${i === 0 ? 'M' : 'L'}${x(i).toFixed(1)},${y(p.value).toFixed(1)}`)
    .join(' ');
  const grid = ticks
    .map(
      (t) =>
        `<line x1="${pad.left}" x2="${W - pad.right}" y1="${y(t).toFixed(1)}" y2="${y(t).toFixed(1)}" stroke="#d0d7de"/>` +
        `<text x="${pad.left - 6}" y="${(y(t) + 4).toFixed(1)}" text-anchor="end" font-size="11" fill="#57606a">${fmt(t)}</text>`,
    )
    .join('');
  const labels = points
    .map((p, i) =>
      i % every === 0 || i === points.length - 1
        ? `<text x="${x(i).toFixed(1)}" y="${H - 12}" text-anchor="middle" font-size="11" fill="#57606a">${escText(p.label)}</text>`
        : '',
    )
    .join('');
  const dots = points
    .map(
      (p, i) =>
        `<circle cx="${x(i).toFixed(1)}" cy="${y(p.value).toFixed(1)}" r="3" fill="#0b5cad"><title>${escText(p.label)}: ${fmt(p.value)} ${escText(options.unit)}</title></circle>`,
    )
    .join('');
  return html`<figure>
<svg class="chart" viewBox="0 0 ${W} ${H}" role="img" aria-label="${options.title}">${raw(grid)}${raw(labels)}<path d="${path}" fill="none" stroke="#0b5cad" stroke-width="2"/>${raw(dots)}</svg>
<figcaption>${options.title}</figcaption>
</figure>`;
}

function niceMax(v: number): number {
  if (v <= 0) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 2.5, 5, 10]) if (v <= m * p) return m * p;
  return 10 * p;
}

function fmt(v: number): string {
  return v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2);
}

function escText(s: string): string {
  return s.replace(/[&<>]/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : '&gt;'));
}

/** A history's chart of one metric, a point per period; nothing when there is no history. */
export function historyChart<P extends { period: string }>(
  series: readonly P[],
  value: (point: P) => number,
  options: { title: string; unit: string; max?: number },
): Html {
  return series.length > 0
    ? lineChart(
        series.map((p) => ({ label: p.period, value: value(p) })),
        options,
      )
    : html``;
}

/** RIS by year (0-100), as the element and subject pages show it. */
export const risByYear = (name: string, series: readonly { period: string; ris: number }[]): Html =>
  historyChart(series, (p) => p.ris, { title: `${name}: RIS by year`, unit: 'RIS', max: 100 });
