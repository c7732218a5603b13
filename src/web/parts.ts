import type { WebSession } from '../access/state-store.js';
import type { elementPapers } from '../core/papers.js';
import { type Html, html } from './html.js';
import { countText } from './numbers.js';

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
  return html`<h2 id="papers">Top papers</h2>
<p class="muted">The ${papers.length < totalRanked ? `first ${papers.length} of ` : ''}${countText(totalRanked)} ranked papers, by impact. All of them: <a href="${links.csvHref}" download>CSV download</a>, or <code>${links.apiPath}</code> with your key (add <code>format=csv</code> for CSV).</p>
<ol class="papers">${papers.map(
    (p) =>
      html`<li><a href="${p.link}">${p.title ?? p.doi ?? 'untitled'}</a>${p.year ? ` (${p.year})` : ''}${p.venue ? html` <span class="muted">${p.venue}</span>` : html``}${p.citations === null ? '' : html` <span class="muted">· ${countText(p.citations)} citations</span>`}</li>`,
  )}</ol>`;
}
