import type { Context, Env, Hono } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { type OperationId, operation, planAllows, requiredPlan } from '../access/policy.js';
import type { WebSession } from '../access/state-store.js';
import { badgePath } from '../core/badges.js';
import { listElements, symbolsNamedIn } from '../core/elements.js';
import { ServiceError } from '../core/errors.js';
import { feedPath } from '../core/feeds.js';
import { subjectHistory } from '../core/history.js';
import type { LabQuote } from '../core/lab.js';
import type { LabService } from '../core/lab-service.js';
import { subjectPapers } from '../core/papers.js';
import { LENSES, type ResearchAnswer } from '../core/research.js';
import { getSubject, type SubjectType, searchSubjects, subjectElements } from '../core/subjects.js';
import { type Viewer, viewerFor } from '../core/viewer.js';
import { inThread, type WorkerPool } from '../core/worker-pool.js';
import type { Snapshot, SnapshotManager } from '../snapshot/snapshot.js';
import { risByYear } from './chart.js';
import { embedSnippet } from './embed.js';
import { feedLink, Html, html, type Site } from './html.js';
import { countOf, countText, risText, riText } from './numbers.js';
import { hriText, PAPERS_SHOWN, paperList, planNote } from './parts.js';
import type { WebSessions } from './session.js';
import { withSnapshot } from './with-snapshot.js';

export interface AnswerPageDeps {
  site: Site;
  snapshots: SnapshotManager;
  sessions: WebSessions;
  publicUrl: string;
  edition: 'full' | 'enterprise';
  /** Whether this server takes per-call payments. */
  payments: boolean;
  lab: LabService | null;
  /** Where research is computed; in this thread when absent. */
  workerPool?: WorkerPool;
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

/** What a page's render gives: its body, and what it says of itself to search engines and previews. */
interface PageParts {
  body: Html;
  /** The page's status: 200 unless the question could not be answered. */
  status?: number;
  title?: string;
  description?: string;
  url?: string;
  feed?: { href: string; title: string };
}

/** A subject's page on OpenAlex, where its record comes from. */
const openAlexUrl = (type: SubjectType, id: string) =>
  type === 'topic' ? `https://openalex.org/${id}` : `https://openalex.org/keywords/${encodeURIComponent(id)}`;

/**
 * The canonical_urls of subject, search, research and lab answers. Every reader sees what is
 * public (a subject's name, description, field and OpenAlex record; the question asked; topic
 * names found by a search) and how to get the rest; an account whose plan opens the answer gets
 * the data, from the same core functions and the same access table as the API.
 */
export function registerAnswerPages<E extends Env>(app: Hono<E>, deps: AnswerPageDeps): void {
  const withData = async (
    c: AnyContext,
    title: string,
    render: (snapshot: Snapshot, session: WebSession | null) => Html | PageParts | Promise<Html | PageParts>,
  ) => {
    const session = await deps.sessions.current(c);
    return withSnapshot(
      c,
      deps.site,
      deps.snapshots,
      async (snapshot) => {
        const out = await render(snapshot, session);
        const parts: PageParts = out instanceof Html ? { body: out } : out;
        return c.html(
          deps.site.page(parts.title ?? title, parts.body, {
            ...(parts.description ? { description: parts.description } : {}),
            ...(parts.url ? { url: parts.url } : {}),
            ...(parts.feed ? { feed: parts.feed } : {}),
          }),
          (parts.status ?? 200) as ContentfulStatusCode,
          pageHeaders(session),
        );
      },
      pageHeaders(session),
    );
  };

  app.get('/subjects/search', (c) => {
    const q = c.req.query('q') ?? '';
    return withData(c, 'Search', (snapshot, session) => {
      if (q.trim() === '')
        return askForm('/subjects/search', 'Search elements, topics and keywords', 'Words to look for');
      const apiPath = `/v1/subjects/search?${new URLSearchParams({ q })}`;
      const full = sessionAllows(session, 'searchSubjects', deps.edition);
      const viewer = sessionViewer(session, deps);
      // The elements the words name (their scores are public), by the same reading as the lab's terms.
      const symbols = symbolsNamedIn(q);
      const elements = symbols.length === 0 ? [] : listElements(snapshot, viewer, symbols).elements;
      // One search for every reader; a visitor is shown the topic names it finds (public, as
      // each topic's page is), an account also the keywords, paper counts and why each matched.
      const answer = searchSubjects(snapshot, q, viewer);
      const results = full ? answer.results : answer.results.filter((r) => r.subject_type === 'topic');
      const subjects = full ? 'Topics and keywords' : 'Topics';
      const body = html`<h1>Search: “${q}”</h1>
${
  elements.length > 0
    ? html`<h2>Elements</h2><ul class="found">${elements.map((e) => html`<li><a href="/elements/${e.symbol}">${e.name} (${e.symbol})</a> <span class="muted">RIS ${risText(e.ris)}, RI ${riText(e.ri)}, ${countOf(e.paper_count, 'paper')}</span></li>`)}</ul>`
    : html``
}
<h2>${subjects}</h2>
${
  results.length === 0
    ? html`<p>No ${full ? 'topic or keyword' : 'topic'} matches.</p>`
    : full
      ? html`<table class="data results"><thead><tr><th scope="col">Subject</th><th scope="col">Type</th><th scope="col">Papers</th><th scope="col">Why it matched</th></tr></thead><tbody>
${results.map((r) => html`<tr><td data-label="Subject"><a href="/subjects/${r.subject_type}/${encodeURIComponent(r.subject_id)}">${r.name}</a></td><td data-label="Type">${r.subject_type}</td><td data-label="Papers">${countText(r.paper_count)}</td><td data-label="Why it matched">${r.match}</td></tr>`)}
</tbody></table>`
      : html`<ul class="found">${results.map((r) => html`<li><a href="/subjects/topic/${encodeURIComponent(r.subject_id)}">${r.name}</a></li>`)}</ul>`
}
${
  full
    ? html`<p class="muted">The ${subjects.toLowerCase()} as JSON: <code>${apiPath}</code> (with your key)${elements.length > 0 ? html`; an element's scores: <code>/v1/elements/${elements[0]!.symbol}</code> (no key)` : ''}.</p>`
    : html`<p class="gate">Keywords, paper counts and why each subject matched are shown to any signed-in account (free): <a href="/account">sign in</a>. The API answers the same search at <code>${apiPath}</code> with any key.</p>`
}`;
      return { body, title: `Search: ${q}` };
    });
  });

  app.get('/subjects/:type/:id', (c) =>
    withData(c, 'Subject', (snapshot, session) => {
      const type = c.req.param('type');
      if (type !== 'topic' && type !== 'keyword')
        throw new ServiceError('not_found', `No subject type '${type}'.`);
      const allowed = sessionAllows(session, 'getSubject', deps.edition);
      const viewer = sessionViewer(session, deps);
      const s = getSubject(snapshot, type, c.req.param('id'), viewer);
      const apiPath = `/v1/subjects/${type}/${encodeURIComponent(s.subject_id)}`;
      const label = `${type === 'topic' ? 'Topic' : 'Keyword'}: ${s.name}`;
      const feed = {
        href: `${deps.publicUrl}${feedPath(type, s.subject_id)}`,
        title: `${s.name}: changes in research intensity`,
      };
      const feedLevel = operation('getSubjectFeed').access;
      const facts = html`<h1>${label}</h1>
${s.description ? html`<p>${s.description}</p>` : html``}
${feedLink(feed.href, `the changes of this ${type}`, feedLevel === 'public', `${requiredName(feedLevel === 'professional' ? 'professional' : 'personal', deps.edition)}`)}
<dl class="facts">${[
        ['Domain', s.domain],
        ['Field', s.field],
        ['Subfield', s.subfield],
      ]
        .filter(([, v]) => v)
        .map(
          ([k, v]) => html`<dt>${k}</dt><dd>${v}</dd>`,
        )}<dt>OpenAlex</dt><dd><a class="url" href="${openAlexUrl(type, s.subject_id)}">${openAlexUrl(type, s.subject_id)}</a></dd></dl>`;
      const embed = embedSnippet({
        publicUrl: deps.publicUrl,
        page: s.canonical_url,
        badge: badgePath(type, s.subject_id),
        sparkline: badgePath(type, s.subject_id, true),
        alt: `${s.name}: research intensity score (RIS)`,
        tokenNeeded: operation('getSubjectBadge').access !== 'public',
        plan: requiredName('personal', deps.edition),
      });
      const parts = {
        title: label,
        description:
          `${label}${s.field ? ` (${s.field})` : ''}: its research intensity (RI, RIS), history, top papers and the chemical elements it is routed to.${s.description ? ` ${s.description}` : ''}`.slice(
            0,
            300,
          ),
        url: `${deps.publicUrl}/subjects/${type}/${encodeURIComponent(s.subject_id)}`,
        feed,
      };
      if (!allowed)
        return {
          ...parts,
          body: html`${facts}
<h2>Scores, history and papers</h2>
${planNote(`its RI, RIS and HRI, its history by year, its top papers and the elements it is routed to`, requiredName('personal', deps.edition), session)}
<p class="muted">From the API: <code>${apiPath}</code> and <code>${apiPath}/papers</code>${session ? '' : ', with a key on that plan or paid per call'}.</p>
${embed}`,
        };
      const series = subjectHistory(snapshot, type, s.subject_id, 'yearly', viewer).series;
      const papers = subjectPapers(
        snapshot,
        type,
        s.subject_id,
        { sort: 'impact', limit: PAPERS_SHOWN },
        viewer,
      );
      let routed: Html;
      try {
        const answer = subjectElements(snapshot, type, s.subject_id, viewer);
        routed = html`<ol>${answer.elements.map((e) => html`<li><a href="/elements/${e.symbol}">${e.name} (${e.symbol})</a>: ${(e.share * 100).toFixed(1)}%</li>`)}</ol>`;
      } catch (e) {
        if (!(e instanceof ServiceError) || e.code !== 'unknown_subject') throw e;
        routed = html`<p>None of its papers names an element.</p>`;
      }
      return {
        ...parts,
        body: html`${facts}
<table class="data"><tbody>
<tr><th scope="row">RI</th><td>${riText(s.ri)}</td></tr>
<tr><th scope="row">RIS</th><td>${risText(s.ris)}</td></tr>
<tr><th scope="row">HRI</th><td>${hriText(s.hri, snapshot.meta, `is on this ${type}`)}</td></tr>
<tr><th scope="row">Papers</th><td>${countText(s.paper_count)}</td></tr>
</tbody></table>
${risByYear(s.name, series, snapshot.meta.cutoff_date)}
<p class="muted">RIS compares ${type}s with ${type}s within one data version (${snapshot.version}).</p>
<h2 id="elements">Elements it is routed to</h2>
<p class="muted">The share of its papers' weight on each element, of the total over all elements.</p>
${routed}
${paperList(papers.papers, papers.total_ranked, {
  csvHref: `/subjects/${type}/${encodeURIComponent(s.subject_id)}/papers.csv`,
  apiPath: `${apiPath}/papers?limit=100`,
})}
${embed}
${asJson(apiPath)}`,
      };
    }),
  );

  // The older edition has no research and no lab (their API answers 404): nor have its pages.
  if (deps.edition !== 'full') return;

  app.get('/research', (c) => {
    const paper = c.req.query('paper');
    const q = paper ?? c.req.query('q') ?? '';
    // The box asks again what was asked: a paper (DOI or title) or a question.
    const box = researchBox(paper !== undefined ? 'paper' : 'q', q);
    return withData(c, 'Research', async (snapshot, session) => {
      const apiPath = `/v1/research?${new URLSearchParams(paper ? { paper } : { q })}`;
      const allowed = sessionAllows(session, 'research', deps.edition);
      const needs = requiredName('personal', deps.edition);
      const what =
        'the research communities behind a question and three reading lists (foundational, now, newest)';
      if (q.trim() === '')
        return html`<h1>Research a question</h1>${box}${allowed ? html`` : html`<p>A research answer holds ${what}.</p>${planNote('research answers', needs, session)}`}`;
      if (!allowed)
        return {
          title: `Research: ${q}`,
          body: gated(`Research: ${q}`, box, what, apiPath, needs, session, deps.payments),
        };
      let answer: ResearchAnswer;
      try {
        answer = await (deps.workerPool ?? inThread).run<ResearchAnswer>(snapshot, {
          kind: 'research',
          request: { ...(paper ? { paper } : { q }), pageSize: 10, lenses: [...LENSES], page: 1 },
          viewer: sessionViewer(session, deps),
        });
      } catch (e) {
        // A question nothing matches: said beside the box, to ask another.
        if (!(e instanceof ServiceError) || e.status >= 500) throw e;
        return asked(
          e.status,
          `Research: ${q}`,
          html`<h1>Research: ${q}</h1>
<p class="problem" role="alert">${e.detail}</p>${box}`,
        );
      }
      const none = noneBecause(answer.notes.empty);
      return {
        title: `Research: ${answer.q}`,
        body: html`<h1>Research: ${answer.q}</h1>
${box}
<p>${countOf(answer.matched_papers, 'matching paper')}.</p>
${
  answer.unmatched_terms.length > 0
    ? html`<p class="problem">Found nowhere in the corpus, so left out of the search: ${answer.unmatched_terms.map((t, i) => html`${i > 0 ? ', ' : ''}<code>${t}</code>`)}.</p>`
    : html``
}
<h2>Communities</h2>
${answer.communities.length === 0 ? none('communities') : html`<ul>${answer.communities.map((m) => html`<li><a href="/subjects/topic/${encodeURIComponent(m.subject_id)}">${m.name}</a>: ${countOf(m.matching_papers, 'paper')}${m.rising ? ' (rising)' : ''}</li>`)}</ul>`}
${LENSES.map((lens) => {
  const list = answer.lists[lens] ?? [];
  return html`<h2>${lens[0]!.toUpperCase()}${lens.slice(1)}</h2>${list.length === 0 ? none(lens) : html`<ol class="papers">${list.map((p) => html`<li><a href="${p.link}">${p.title ?? p.doi ?? 'untitled'}</a>${p.year ? ` (${p.year})` : ''}${p.venue ? html` <span class="muted">${p.venue}</span>` : html``}</li>`)}</ol>`}`;
})}
${asJson(apiPath)}`,
      };
    });
  });

  // No lab, no lab page (the older edition's, whose API answers 404 too).
  const lab = deps.lab;
  if (!lab) return;

  app.get('/lab', (c) => {
    const q = c.req.query('q') ?? '';
    return withData(c, 'Lab', async (snapshot, session) => {
      const apiPath = `/v1/lab/quote?${new URLSearchParams({ q })}`;
      const allowed = sessionAllows(session, 'labQuote', deps.edition);
      const needs = requiredName('professional', deps.edition);
      const what =
        'a binding quote (matches, years, communities, prices) and then the matching papers ranked by impact';
      if (q.trim() === '')
        return html`<h1>Lab queries</h1>${labBox('')}${allowed ? html`` : html`<p>A lab query gets ${what}.</p>${planNote('lab queries', needs, session)}`}`;
      if (!allowed)
        return {
          title: `Lab query: ${q}`,
          body: gated(`Lab query: ${q}`, labBox(q), what, apiPath, needs, session, deps.payments),
        };
      // A look at the quote: computed, not kept (a binding quote comes from the API).
      let quote: LabQuote;
      try {
        quote = await lab.quote(snapshot, q, sessionViewer(session, deps), { keep: false });
      } catch (e) {
        if (!(e instanceof ServiceError) || e.code !== 'unusable_query') throw e;
        return asked(e.status, `Lab query: ${q}`, unusable(q, e));
      }
      const why = whyEmpty(quote.notes.empty);
      return {
        title: `Lab query: ${quote.query}`,
        body: html`<h1>Lab query: ${quote.query}</h1>
${labBox(q)}
<p>${countOf(quote.matches, 'matching paper')}${quote.sample.used ? ` (years and communities from a sample of ${countText(quote.sample.size)})` : ''}.</p>
${
  quote.ignored.length > 0
    ? html`<div class="problem"><p>Ignored, as this data does not know ${quote.ignored.length === 1 ? 'it' : 'them'}:</p><ul>${quote.ignored.map((t) => html`<li><code>${t.term}</code>: ${t.reason}${t.suggestions.length > 0 ? html`; perhaps ${t.suggestions.map((s, i) => html`${i > 0 ? ', ' : ''}<code>${s}</code>`)}` : ''}.</li>`)}</ul></div>`
    : html``
}
${
  quote.years.length > 0
    ? html`<table class="data cards"><caption>Matching papers by year</caption><thead><tr><th scope="col">Year</th><th scope="col">Papers</th></tr></thead><tbody>
${quote.years.map((y) => html`<tr><td data-label="Year">${y.year ?? 'unknown'}</td><td data-label="Papers">${countText(y.papers)}</td></tr>`)}
</tbody></table>`
    : html`<p>Matching papers by year: none${why.has('years') ? `: ${why.get('years')}` : '.'}</p>`
}
${
  quote.broader.length > 0
    ? html`<p>Broader: ${quote.broader.map((b) => html`<a href="/lab?${new URLSearchParams({ q: b.query })}">${b.query}</a> (${countText(b.matches)}) `)}</p>`
    : why.has('broader')
      ? html`<p class="muted">No broader queries: ${why.get('broader')}</p>`
      : html``
}
<p>For a binding quote and the papers themselves, call <code>${apiPath}</code> and then <code>POST /v1/lab/run</code> with the quote_id.</p>`,
      };
    });
  });
}

/** A page for a question the service could not answer, with the error's status (400, 404). */
const asked = (status: number, title: string, body: Html): PageParts => ({ title, body, status });

/**
 * The example the lab form shows: one the service quotes (a test submits it), in the spec's
 * filter syntax (bare terms, an OR group, an excluded term, a year range; there is no AND).
 */
const LAB_EXAMPLE = '(Ni OR Co) Fe -Pt year:2020..';

/**
 * What an answer's notes.empty says of each of its lists, by the list's name. The API says why a
 * list is empty in one text of sentences "<list> is empty: <why>" (or "years and communities are
 * empty: ..."); a page shows each reason where it shows that list.
 */
function whyEmpty(empty: string | undefined): Map<string, string> {
  const out = new Map<string, string>();
  const said = /(\w+(?: and \w+)*) (?:is|are) empty: (.+?)(?= \w+(?: and \w+)* (?:is|are) empty: |$)/g;
  for (const m of (empty ?? '').matchAll(said)) for (const name of m[1]!.split(' and ')) out.set(name, m[2]!);
  return out;
}

/** "None" for an empty list of an answer, with the reason its notes give. */
function noneBecause(empty: string | undefined): (list: string) => Html {
  const why = whyEmpty(empty);
  return (list) => html`<p class="muted">None${why.has(list) ? `: ${why.get(list)}` : '.'}</p>`;
}

/** A plan tier's name in this edition, as a reader reads it ("the Personal plan"). */
export function requiredName(level: 'personal' | 'professional', edition: 'full' | 'enterprise'): string {
  const plan = requiredPlan(level, edition);
  return `the ${plan[0]!.toUpperCase()}${plan.slice(1)} plan`;
}

/**
 * A page for an answer the reader cannot see: the question asked (in its box, to change it), what
 * the answer holds, where to get it, and what it needs. `what` is a noun phrase ("the research
 * communities behind ...").
 */
function gated(
  title: string,
  box: Html,
  what: string,
  apiPath: string,
  needs: string,
  session: WebSession | null,
  payments: boolean,
): Html {
  return html`<h1>${title}</h1>
${box}
<p>The answer holds ${what}. The API answers it at <code>${apiPath}</code> (with a key on ${needs}${!session && payments ? ', or paid per call' : ''}), and AI agents get it through the MCP tool server.</p>
${planNote('answers like this', needs, session)}
<p><a href="/">The periodic table</a> is free.</p>`;
}

/** The question box of the research page, holding what was asked (a question, or a paper to start from). */
function researchBox(name: 'q' | 'paper', value: string): Html {
  const label =
    name === 'paper' ? 'A paper to start from (its DOI or title)' : 'Your question, in words or terms';
  return html`<form class="stack" method="get" action="/research"><label for="q">${label}</label><input id="q" name="${name}" required maxlength="500" value="${value}"><button type="submit">Ask</button></form>`;
}

/** The lab's query box, holding the query asked, its label the filter syntax by example. */
function labBox(value: string): Html {
  return html`<form class="stack" method="get" action="/lab"><label for="q">A filter, for example <code>${LAB_EXAMPLE}</code></label><input id="q" name="q" required maxlength="1000" value="${value}" spellcheck="false" autocapitalize="off"><button type="submit">Quote</button></form>`;
}

/**
 * An unusable lab query: what is wrong, the query with the place marked, the suggestion, the
 * corrected query one click away where the error gives one, and the box to edit it.
 */
function unusable(q: string, e: ServiceError): Html {
  const query = typeof e.extra.query === 'string' ? e.extra.query : q;
  const at =
    typeof e.extra.position === 'number' ? Math.min(Math.max(0, e.extra.position), query.length) : null;
  const fixed = typeof e.extra.suggested_query === 'string' ? e.extra.suggested_query : null;
  const suggestion = typeof e.extra.suggestion === 'string' ? e.extra.suggestion : null;
  const ignored = Array.isArray(e.extra.ignored)
    ? (e.extra.ignored as { term: string; reason: string; suggestions: string[] }[])
    : [];
  // The offending token where it starts at the position, else the character there, or a marked
  // space after the end when the query stops short.
  const token = typeof e.extra.token === 'string' ? e.extra.token : '';
  const length = at !== null && token !== '' && query.startsWith(token, at) ? token.length : 1;
  const marked =
    at === null
      ? html`<code class="query">${query}</code>`
      : html`<code class="query">${query.slice(0, at)}<mark>${at < query.length ? query.slice(at, at + length) : ' '}</mark>${query.slice(at + length)}</code>`;
  return html`<h1>Lab query: ${q}</h1>
<div class="problem" role="alert"><p>${e.detail}</p>
<p>${at === null ? 'The query:' : `At position ${at} (marked):`} ${marked}</p>
${suggestion ? html`<p>Suggestion: ${suggestion}.</p>` : html``}
${ignored.length > 0 ? html`<ul>${ignored.map((t) => html`<li><code>${t.term}</code>: ${t.reason}${t.suggestions.length > 0 ? html`; perhaps ${t.suggestions.map((s, i) => html`${i > 0 ? ', ' : ''}<code>${s}</code>`)}` : ''}.</li>`)}</ul>` : html``}
${fixed ? html`<p>Try it corrected: <a class="fix" href="/lab?${new URLSearchParams({ q: fixed })}">${fixed}</a></p>` : html``}</div>
${labBox(query)}`;
}

/** The question form of a page whose answer the account may see. */
const askForm = (action: string, title: string, label: string | Html) =>
  html`<h1>${title}</h1>
<form class="stack" method="get" action="${action}"><label for="q">${label}</label><input id="q" name="q" required maxlength="500"><button type="submit">Ask</button></form>`;

const asJson = (apiPath: string) =>
  html`<p class="muted">The same answer as JSON: <code>${apiPath}</code> (with your key).</p>`;
