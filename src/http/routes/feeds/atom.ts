import { z } from '@hono/zod-openapi';
import { Feed } from 'feed';
import type { Context } from 'hono';
import type { ChangeEntry } from '../../../contracts/changes.js';
import type { FeedAnswer } from '../../../core/feeds.js';
import { esc } from '../../../web/html.js';
import type { AppEnv } from '../../context.js';

/** The media type of every feed. */
const ATOM_TYPE = 'application/atom+xml; charset=utf-8';

/** A feed's 200 as the OpenAPI document describes it: Atom 1.0 XML. */
export const atomAnswer = (description: string) => ({
  description,
  content: {
    'application/atom+xml': {
      schema: z.string().openapi({ description: 'An Atom 1.0 feed (RFC 4287)', format: 'xml' }),
    },
  },
});

const number = (v: number | null, digits: number) => (v === null ? '–' : v.toFixed(digits));

/** An entry's summary: the change's numbers before and after, as a small HTML table. */
function summary(c: ChangeEntry): string {
  const row = (label: string, before: string, after: string) =>
    `<tr><th scope="row">${label}</th><td>${esc(before)}</td><td>${esc(after)}</td></tr>`;
  const flag = (v: boolean | null) => (v === null ? '–' : v ? 'rising' : 'not rising');
  const rows = [
    row('RI (papers per 10,000)', number(c.ri.before, 2), number(c.ri.after, 2)),
    row('RIS (0-100)', number(c.ris.before, 2), number(c.ris.after, 2)),
    c.hri.before === null && c.hri.after === null
      ? ''
      : row('HRI', number(c.hri.before, 2), number(c.hri.after, 2)),
    row('Rank among its kind', number(c.rank.before, 0), number(c.rank.after, 0)),
    c.subject_type === 'topic' ? row('Community', flag(c.rising.before), flag(c.rising.after)) : '',
  ];
  return (
    `<table><thead><tr><th></th><th scope="col">before</th><th scope="col">after</th></tr></thead><tbody>${rows.join('')}</tbody></table>` +
    `<p>Data version ${esc(c.data_version)}, compared with ${esc(c.since)}. Move: ${esc(c.move)} RIS points (${esc(c.direction)}).</p>`
  );
}

/**
 * The feed as Atom 1.0 (the `feed` package writes the XML and its escaping). Its self link is the
 * address asked, token included: a reader may refresh from it, and it holds the token already
 * (the body goes only to who sent the token, and is never logged).
 */
export function atomResponse(c: Context<AppEnv>, feed: FeedAnswer): Response {
  const url = new URL(c.req.url);
  const publicUrl = c.get('services').publicUrl;
  const atom = new Feed({
    id: feed.id,
    title: feed.title,
    description: feed.subtitle,
    updated: new Date(feed.updated),
    generator: false,
    link: feed.link,
    feed: `${publicUrl}${url.pathname}${url.search}`,
    author: { name: 'Research Intensity', link: `${publicUrl}/` },
  });
  for (const e of feed.entries)
    atom.addItem({
      id: e.id,
      // type="html": the title is markup, so a name's < or & is escaped as text.
      title: esc(e.title),
      link: e.link,
      date: new Date(e.updated),
      description: summary(e.change),
    });
  return c.body(atom.atom1(), 200, { 'content-type': ATOM_TYPE, 'ri-data-version': feed.data_version });
}
