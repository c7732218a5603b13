import type { WebSession } from '../access/state-store.js';
import type { elementPapers } from '../core/papers.js';
import { type Html, html } from './html.js';
import { countOf, riText } from './numbers.js';

/** A paper of a ranked list, as the core answers it. */
export type PaperEntry = ReturnType<typeof elementPapers>['papers'][number];

/** Papers a page lists; the rest of the ranked list is a download or an API call away. */
export const PAPERS_SHOWN = 20;

/**
 * Where a reader gets what the page does not show them: a visitor is sent to sign in and to the
 * plans, an account to the plan it lacks. `what` is a plural noun phrase ("its top papers").
 */
export function planNote(what: string, needs: string, session: WebSession | null): Html {
  return session
    ? html`<p class="gate">Your plan is ${session.plan}: ${what} need ${needs} (<a href="/pricing#plans">plans and how to get one</a>).</p>`
    : html`<p class="gate">${what[0]!.toUpperCase()}${what.slice(1)} are shown with ${needs}: <a href="/account">sign in</a> with an account on that plan, or see <a href="/pricing#plans">plans and how to get one</a>.</p>`;
}

/**
 * A ranked paper list as a page shows it: the first PAPERS_SHOWN, a CSV of all of them for the
 * signed-in reader (`csvHref`), and the API call that gives them with a key (`apiPath`).
 */
export function paperList(
  papers: readonly PaperEntry[],
  totalRanked: number,
  links: { csvHref: string; apiPath: string },
): Html {
  if (papers.length === 0) return html`<h2 id="papers">Top papers</h2><p>No ranked papers.</p>`;
  const unknown = papers.some((p) => p.citations === null);
  return html`<h2 id="papers">Top papers</h2>
<p class="muted">The ${papers.length < totalRanked ? `first ${papers.length} of ` : ''}${countOf(totalRanked, 'ranked paper')}, by impact. All of them: <a href="${links.csvHref}" download>CSV download</a>, or <code>${links.apiPath}</code> with your key (add <code>format=csv</code> for CSV).</p>
${unknown ? html`<p class="muted">${UNKNOWN_CITATIONS}</p>` : html``}
<ol class="papers">${papers.map(
    (p) =>
      html`<li><a href="${p.link}">${p.title ?? p.doi ?? 'untitled'}</a>${p.year ? ` (${p.year})` : ''}${p.venue ? html` <span class="muted">${p.venue}</span>` : html``} <span class="muted">· ${p.citations === null ? 'citations unknown' : countOf(p.citations, 'citation')}</span></li>`,
  )}</ol>`;
}

/** What "citations unknown" means, said once above a list that shows it. */
const UNKNOWN_CITATIONS =
  'Citations unknown: the source record (OpenAlex) has no citation count for the paper, which is not the same as none; such papers rank after every paper with known citations.';

/**
 * HRI as the pages show it to a reader whose plan has it: the value, and where it reads 0 or has
 * none, why, from the window's count of high-impact papers (`names`: what a paper does to count
 * for the subject, "names Iron", "is on this topic").
 */
export function hriText(hri: number | null, meta: Readonly<Record<string, string>>, names: string): Html {
  const window = `the 12 months to ${meta.window_end}`;
  if (hri === null)
    return html`none <span class="muted">(no paper of ${window} has citation data, so none can be high-impact)</span>`;
  if (hri !== 0) return html`${riText(hri)}`;
  const n = Number(meta.window_high_impact_papers ?? 0);
  return html`0 <span class="muted">(${n === 0 ? `no paper of ${window} is high-impact` : `none of the ${countOf(n, 'high-impact paper')} of ${window} ${names}`})</span>`;
}
