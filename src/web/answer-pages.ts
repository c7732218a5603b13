import type { Context, Env, Hono } from 'hono';
import { type OperationId, operation, planAllows } from '../access/policy.js';
import type { WebSession } from '../access/state-store.js';
import { ServiceError } from '../core/errors.js';
import { subjectHistory } from '../core/history.js';
import type { LabService } from '../core/lab-service.js';
import { LENSES, type ResearchAnswer } from '../core/research.js';
import { findSubject, getSubject, type SubjectType, searchSubjects } from '../core/subjects.js';
import { type Viewer, viewerFor } from '../core/viewer.js';
import { type HeavyWork, inThread } from '../offload/heavy-work.js';
import type { Snapshot, SnapshotManager } from '../snapshot/snapshot.js';
import { risByYear } from './chart.js';
import { type Html, html, page } from './html.js';
import type { WebSessions } from './session.js';
import { withSnapshot } from './with-snapshot.js';

export interface AnswerPageDeps {
  snapshots: SnapshotManager;
  sessions: WebSessions;
  publicUrl: string;
  edition: 'full' | 'enterprise';
  lab: LabService | null;
  /** Where research is computed; in this thread when absent. */
  heavy?: HeavyWork;
}

// biome-ignore lint/suspicious/noExplicitAny: any route's context
type AnyContext = Context<any, any, any>;

/** What a signed-in account may see, from the same access table as the API. */
export function sessionViewer(
  session: WebSession | null,
  deps: { publicUrl: string; edition: 'full' | 'enterprise' },
): Viewer {
  return viewerFor(session?.plan ?? null, deps.edition, deps.publicUrl);
}

/** Whether the signed-in account's plan opens an operation (never for a visitor not signed in). */
export function sessionAllows(
  session: WebSession | null,
  id: OperationId,
  edition: 'full' | 'enterprise',
): boolean {
  return session !== null && planAllows(session.plan, operation(id).access, edition);
}

/**
 * Private when signed in (the page shows the account's data), public otherwise; Vary: Cookie so a
 * shared cache never gives one to the other.
 */
export function pageHeaders(session: WebSession | null): Record<string, string> {
  return session
    ? { 'cache-control': 'private, no-store', vary: 'Cookie' }
    : { 'cache-control': 'public, max-age=300', vary: 'Cookie' };
}

/**
 * The canonical_urls of subject, search, research and lab answers. A visitor (or an account whose
 * plan does not open the answer) gets a page naming what it is and how to get it; an account whose
 * plan opens it gets the data, from the same core functions as the API.
 */
export function registerAnswerPages<E extends Env>(app: Hono<E>, deps: AnswerPageDeps): void {
  const withData = async (
    c: AnyContext,
    title: string,
    render: (snapshot: Snapshot, session: WebSession | null) => Html | Promise<Html>,
  ) => {
    const session = await deps.sessions.current(c);
    return withSnapshot(
      c,
      deps.snapshots,
      async (snapshot) => c.html(page(title, await render(snapshot, session)), 200, pageHeaders(session)),
      pageHeaders(session),
    );
  };

  app.get('/subjects/search', (c) => {
    const q = c.req.query('q') ?? '';
    return withData(c, 'Subject search', (snapshot, session) => {
      const apiPath = `/v1/subjects/search?${new URLSearchParams({ q })}`;
      if (sessionAllows(session, 'searchSubjects', deps.edition) && q.trim() === '')
        return askForm('/subjects/search', 'Search topics and keywords', 'Words to look for');
      if (!sessionAllows(session, 'searchSubjects', deps.edition))
        return gated(
          `Subject search for “${q}”`,
          'resolves free text to topics and keywords (subject_type and subject_id)',
          apiPath,
          'any key',
          session,
        );
      const answer = searchSubjects(snapshot, q, sessionViewer(session, deps));
      return html`<h1>Subjects matching “${q}”</h1>
${
  answer.results.length === 0
    ? html`<p>No topic or keyword matches.</p>`
    : html`<table class="data"><thead><tr><th scope="col">Subject</th><th scope="col">Type</th><th scope="col">Why it matched</th></tr></thead><tbody>
${answer.results.map((r) => html`<tr><td><a href="/subjects/${r.subject_type}/${encodeURIComponent(r.subject_id)}">${r.name}</a></td><td>${r.subject_type}</td><td>${r.match}</td></tr>`)}
</tbody></table>`
}
${asJson(apiPath)}`;
    });
  });

  app.get('/subjects/:type/:id', (c) =>
    withData(c, 'Subject', (snapshot, session) => {
      const type = c.req.param('type');
      if (type !== 'topic' && type !== 'keyword')
        throw new ServiceError('not_found', `No subject type '${type}'.`);
      const row = findSubject(snapshot, type as SubjectType, c.req.param('id'));
      const apiPath = `/v1/subjects/${type}/${encodeURIComponent(row.id)}`;
      const label = `${type === 'topic' ? 'Topic' : 'Keyword'}: ${row.name}`;
      if (!sessionAllows(session, 'getSubject', deps.edition))
        return gated(
          label,
          'its RI, RIS, HRI, history, top papers and the elements it is routed to',
          apiPath,
          'the Personal plan',
          session,
        );
      const viewer = sessionViewer(session, deps);
      const s = getSubject(snapshot, type as SubjectType, row.id, viewer);
      const series = subjectHistory(snapshot, type as SubjectType, row.id, 'yearly', viewer).series;
      return html`<h1>${label}</h1>
${s.description ? html`<p>${s.description}</p>` : html``}
<table class="data"><tbody>
<tr><th scope="row">RI</th><td>${s.ri.toFixed(4)}</td></tr>
<tr><th scope="row">RIS</th><td>${s.ris.toFixed(2)}</td></tr>
<tr><th scope="row">HRI</th><td>${s.hri === null ? '—' : s.hri.toFixed(4)}</td></tr>
<tr><th scope="row">Papers</th><td>${s.paper_count}</td></tr>
</tbody></table>
${risByYear(s.name, series)}
<p class="muted">RIS compares ${type}s with ${type}s within one data version (${snapshot.version}).</p>
${asJson(apiPath)}`;
    }),
  );

  app.get('/research', (c) => {
    const paper = c.req.query('paper');
    const q = paper ?? c.req.query('q') ?? '';
    return withData(c, 'Research', async (snapshot, session) => {
      const apiPath = `/v1/research?${new URLSearchParams(paper ? { paper } : { q })}`;
      if (sessionAllows(session, 'research', deps.edition) && q.trim() === '')
        return askForm('/research', 'Research a question', 'Your question, in words or terms');
      if (!sessionAllows(session, 'research', deps.edition))
        return gated(
          `Research: ${q}`,
          'the research communities behind a question and three reading lists (foundational, now, newest)',
          apiPath,
          'the Personal plan',
          session,
        );
      const answer = await (deps.heavy ?? inThread).run<ResearchAnswer>(snapshot, {
        kind: 'research',
        request: { ...(paper ? { paper } : { q }), pageSize: 10, lenses: [...LENSES], page: 1 },
        viewer: sessionViewer(session, deps),
      });
      return html`<h1>Research: ${answer.q}</h1>
<p>${answer.matched_papers} matching papers.</p>
<h2>Communities</h2>
${answer.communities.length === 0 ? html`<p>None found.</p>` : html`<ul>${answer.communities.map((m) => html`<li><a href="/subjects/topic/${encodeURIComponent(m.subject_id)}">${m.name}</a>: ${m.matching_papers} papers${m.rising ? ' (rising)' : ''}</li>`)}</ul>`}
${LENSES.map((lens) => {
  const list = answer.lists[lens] ?? [];
  return html`<h2>${lens[0]!.toUpperCase()}${lens.slice(1)}</h2>${list.length === 0 ? html`<p class="muted">None.</p>` : html`<ol>${list.map((p) => html`<li><a href="${p.link}">${p.title ?? p.doi ?? 'untitled'}</a>${p.year ? ` (${p.year})` : ''}${p.venue ? html` <span class="muted">${p.venue}</span>` : html``}</li>`)}</ol>`}`;
})}
${asJson(apiPath)}`;
    });
  });

  app.get('/lab', (c) => {
    const q = c.req.query('q') ?? '';
    return withData(c, 'Lab', async (snapshot, session) => {
      const apiPath = `/v1/lab/quote?${new URLSearchParams({ q })}`;
      if (deps.lab && sessionAllows(session, 'labQuote', deps.edition) && q.trim() === '')
        return askForm('/lab', 'Lab query', 'A filter, for example: Ni AND Fe AND "oxygen evolution"');
      if (!deps.lab || !sessionAllows(session, 'labQuote', deps.edition))
        return gated(
          `Lab query: ${q}`,
          'a binding quote (matches, years, communities, prices) and then the matching papers ranked by impact',
          apiPath,
          'the Professional plan',
          session,
        );
      // A look at the quote: computed, not kept (a binding quote comes from the API).
      const quote = await deps.lab.quote(snapshot, q, sessionViewer(session, deps), { keep: false });
      return html`<h1>Lab query: ${quote.query}</h1>
<p>${quote.matches} matching papers${quote.sample.used ? ` (years and communities from a sample of ${quote.sample.size})` : ''}.</p>
<table class="data"><caption>Matching papers by year</caption><thead><tr><th scope="col">Year</th><th scope="col">Papers</th></tr></thead><tbody>
${quote.years.map((y) => html`<tr><td>${y.year ?? 'unknown'}</td><td>${y.papers}</td></tr>`)}
</tbody></table>
${quote.broader.length > 0 ? html`<p>Broader: ${quote.broader.map((b) => html`<a href="/lab?${new URLSearchParams({ q: b.query })}">${b.query}</a> (${b.matches}) `)}</p>` : html``}
<p>For a binding quote and the papers themselves, call <code>${apiPath}</code> and then <code>POST /v1/lab/run</code> with the quote_id.</p>`;
    });
  });
}

/** A page for an answer the viewer cannot see: what it is, where to get it, and what it needs. */
export function gated(
  title: string,
  what: string,
  apiPath: string,
  needs: string,
  session: WebSession | null,
): Html {
  return html`<h1>${title}</h1>
<p>This answer is ${what}. It is available from the API at <a href="${apiPath}"><code>${apiPath}</code></a> with ${needs} (<a href="/pricing">plans and per-call prices</a>, <a href="/account">keys</a>), and to AI agents through the MCP tool server.</p>
${session ? html`<p>Your plan is ${session.plan}: it does not include this answer.</p>` : html`<p><a href="/account">Sign in</a> with an account whose plan includes it to see it here.</p>`}
<p><a href="/">The periodic table</a> is free.</p>`;
}

/** The question form of a page whose answer the account may see. */
const askForm = (action: string, title: string, label: string) =>
  html`<h1>${title}</h1>
<form class="stack" method="get" action="${action}"><label for="q">${label}</label><input id="q" name="q" required maxlength="500"><button type="submit">Ask</button></form>`;

const asJson = (apiPath: string) =>
  html`<p class="muted">The same answer as JSON: <a href="${apiPath}"><code>${apiPath}</code></a> (with your key).</p>`;
