import { z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { BadgeAnswer, SparklineAnswer } from '../../../core/badges.js';
import { esc } from '../../../web/html.js';
import type { AppEnv } from '../../context.js';

/** The media type of every badge. */
const SVG_TYPE = 'image/svg+xml; charset=utf-8';

/**
 * An SVG opened by itself is a document of this origin: it may run nothing and load nothing, so
 * a name drawn in it could do no harm even if its escaping failed.
 */
const SVG_POLICY = "default-src 'none'";

/** A badge's 200 as the OpenAPI document describes it: an SVG image. */
export const svgAnswer = (description: string) => ({
  description,
  content: {
    'image/svg+xml': {
      schema: z.string().openapi({ description: 'An SVG 1.1 image with role="img", <title> and <desc>' }),
    },
  },
});

const FONT = 'Verdana,DejaVu Sans,Geneva,sans-serif';
const LINE = '#0b5cad';

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what XML forbids
const NOT_XML = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]|\p{Cs}/gu;

/**
 * Text drawn into SVG: XML-escaped (names hold <, & and quotes), without the characters XML 1.0
 * does not allow (a control character or a lone surrogate would make the image fail to parse).
 */
function text(value: string): string {
  return esc(value.replace(NOT_XML, ''));
}

/**
 * About how wide a text is in 11 px Verdana: each element is drawn with textLength set to this, so
 * every renderer fits it to the same box whatever font it has.
 */
function width(value: string, size = 11): number {
  let w = 0;
  for (const ch of value) {
    if (/[ijlI.,:;'!|()[\] ]/.test(ch)) w += 3.9;
    else if (/[ftr-]/.test(ch)) w += 4.6;
    else if (/[mwMW]/.test(ch)) w += 10.5;
    else if (/[0-9a-z]/.test(ch)) w += 6.8;
    else if (/[A-Z]/.test(ch)) w += 7.6;
    else w += ch.codePointAt(0)! > 0x2e80 ? 11 : 7.6;
  }
  return Math.ceil((w * size) / 11);
}

/** The opening of every badge: its size, its role and its accessible name and description. */
function open(w: number, h: number, title: string, description: string): string {
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}" viewBox="0 0 ${w} ${h}" role="img" aria-labelledby="ri-title ri-desc">` +
    `<title id="ri-title">${text(title)}</title><desc id="ri-desc">${text(description)}</desc>`
  );
}

/** A line of text at a place, fitted to its measured width. */
function label(x: number, y: number, value: string, attrs: string, size = 11): string {
  return `<text x="${x}" y="${y}" textLength="${width(value, size)}" lengthAdjust="spacingAndGlyphs" font-size="${size}"${attrs ? ` ${attrs}` : ''}>${text(value)}</text>`;
}

/** A current-RIS badge: the subject on grey, its RIS on blue, 20 px tall, as badges are. */
export function badgeSvg(b: BadgeAnswer): string {
  const left = width(b.label) + 12;
  const right = width(b.value) + 12;
  const w = left + right;
  return (
    open(w, 20, b.title, b.description) +
    `<g aria-hidden="true" font-family="${FONT}" fill="#fff">` +
    `<rect width="${w}" height="20" rx="3" fill="#555"/>` +
    `<path d="M${left} 0h${right - 3}a3 3 0 0 1 3 3v14a3 3 0 0 1-3 3h-${right - 3}z" fill="${LINE}"/>` +
    label(6, 14, b.label, '') +
    label(left + 6, 14, b.value, 'font-weight="bold"') +
    '</g></svg>'
  );
}

/**
 * A yearly sparkline: the subject and the last year's RIS above, the line scaled to its own
 * largest year (the numbers are in the description), the first and last years below; a last year
 * still open at the data's cut-off dashed, as the pages draw it.
 */
export function sparklineSvg(s: SparklineAnswer): string {
  const W = 240;
  const H = 64;
  const box = { left: 6, right: W - 6, top: 21, bottom: 46 };
  const last = s.points[s.points.length - 1];
  const head = last
    ? `${last.period}${s.partialTo ? '*' : ''}: RIS ${last.ris.toFixed(1)}`
    : 'no yearly history';
  const room = W - 12 - width(head) - 8;
  const name = width(s.label) <= room ? s.label : `${[...s.label].slice(0, Math.floor(room / 7)).join('')}…`;
  const top = Math.max(1, ...s.points.map((p) => p.ris));
  const n = s.points.length;
  const x = (i: number) =>
    box.left + (n <= 1 ? (box.right - box.left) / 2 : (i * (box.right - box.left)) / (n - 1));
  const y = (v: number) => box.bottom - (v / top) * (box.bottom - box.top);
  const xy = (i: number) => `${x(i).toFixed(1)},${y(s.points[i]!.ris).toFixed(1)}`;
  const solid = s.partialTo ? n - 1 : n;
  const line =
    n === 1
      ? `<circle cx="${x(0).toFixed(1)}" cy="${y(s.points[0]!.ris).toFixed(1)}" r="2" fill="${LINE}"/>`
      : `<polyline points="${s.points
          .slice(0, solid)
          .map((_, i) => xy(i))
          .join(' ')}" fill="none" stroke="${LINE}" stroke-width="1.5" stroke-linejoin="round"/>` +
        (s.partialTo && n > 1
          ? `<path d="M${xy(n - 2)}L${xy(n - 1)}" fill="none" stroke="${LINE}" stroke-width="1.5" stroke-dasharray="3 2"/>`
          : '');
  const years =
    n === 0
      ? ''
      : label(box.left, 59, s.points[0]!.period, 'fill="#57606a"', 10) +
        (n > 1 ? label(box.right - width(last!.period, 10), 59, last!.period, 'fill="#57606a"', 10) : '');
  return (
    open(W, H, s.title, s.description) +
    `<g aria-hidden="true" font-family="${FONT}">` +
    `<rect x="0.5" y="0.5" width="${W - 1}" height="${H - 1}" rx="3" fill="#fff" stroke="#d0d7de"/>` +
    label(6, 14, name, 'fill="#24292f"') +
    label(W - 6 - width(head), 14, head, 'fill="#24292f" font-weight="bold"') +
    `<line x1="${box.left}" x2="${box.right}" y1="${box.bottom}" y2="${box.bottom}" stroke="#d0d7de"/>` +
    (n > 0 ? line : '') +
    years +
    '</g></svg>'
  );
}

/** A badge as answered: SVG, its data version in a header as the feeds and CSV carry it. */
export function svgResponse(c: Context<AppEnv>, svg: string, dataVersion: string): Response {
  return c.body(svg, 200, {
    'content-type': SVG_TYPE,
    'content-security-policy': SVG_POLICY,
    'ri-data-version': dataVersion,
  });
}
