import type { Context, Env, Hono } from 'hono';
import { type OperationId, operation, planAllows } from '../access/policy.js';
import type { WebSession } from '../access/state-store.js';
import { CSV_TYPE, papersTable, toCsv } from '../contracts/csv.js';
import { badgePath } from '../core/badges.js';
import { canonicalSymbol, type ElementScore, getElement, listElements } from '../core/elements.js';
import { ERROR_CODES, ServiceError } from '../core/errors.js';
import { feedPath } from '../core/feeds.js';
import { elementHistory } from '../core/history.js';
import { elementPapers, subjectPapers } from '../core/papers.js';
import type { Viewer } from '../core/viewer.js';
import type { Snapshot } from '../snapshot/snapshot.js';
import {
  type AnswerPageDeps,
  pageHeaders,
  registerAnswerPages,
  requiredName,
  sessionAllows,
  sessionViewer,
} from './answer-pages.js';
import { historyChart, openYearTo, risByYear } from './chart.js';
import { embedSnippet } from './embed.js';
import { feedLink, type Html, html, SITE_CSS } from './html.js';
import { countOf, countText, risText, riText } from './numbers.js';
import { hriText, PAPERS_SHOWN, type PaperEntry, paperList, planNote } from './parts.js';
import { registerSiteFiles } from './site-files.js';
import { withSnapshot as servePage } from './with-snapshot.js';

export type WebDeps = AnswerPageDeps;

/** RIS bins for the table's colours: 0-100 in six steps. */
const BINS = [0, 1, 10, 25, 50, 75];
const bin = (ris: number) => BINS.reduce((b, lower, i) => (ris >= lower ? i : b), 0);

/**
 * The web pages: every canonical_url, upgrade_url and problem type the API prints is one of
 * these. Server-rendered HTML from the same core as REST, one stylesheet, no script. A visitor
 * is not signed in: nothing the spec puts behind a plan (HRI, paper lists, subject data) is shown.
 */
export function registerPages<E extends Env>(app: Hono<E>, deps: WebDeps): void {
  const viewer: Viewer = { hriAvailable: false, publicUrl: deps.publicUrl, edition: deps.edition };
  // biome-ignore lint/suspicious/noExplicitAny: every route's context, whatever its path parameters
  const withSnapshot = (c: Context<any, any, any>, render: (s: Snapshot) => Response | Promise<Response>) =>
    servePage(c, deps.site, deps.snapshots, render);
  const cacheable = { 'cache-control': 'public, max-age=300' };

  registerSiteFiles(app, deps);

  app.get('/assets/site.css', (c) =>
    c.body(SITE_CSS, 200, {
      'content-type': 'text/css; charset=utf-8',
      'cache-control': 'public, max-age=86400',
    }),
  );

  // biome-ignore lint/suspicious/noExplicitAny: shared by two paths
  const table = (c: Context<any, any, any>) =>
    withSnapshot(c, (snapshot) => {
      const years = yearsOf(snapshot, viewer);
      const asked = c.req.query('year');
      const year = asked && years.includes(asked) ? asked : null;
      // The same page for every visitor of a snapshot and year: rendered once.
      const text = snapshot.memoize(`web:table:${year ?? ''}`, () => {
        const elements = listElements(snapshot, viewer).elements;
        const yearly = year ? yearScores(snapshot, viewer, year) : null;
        const cells = elements.map((e) => {
          const s = yearly?.get(e.symbol) ?? { ri: e.ri, ris: e.ris, papers: e.paper_count };
          return { e, ...s, ...position(e) };
        });
        // The year still open at the data's cut-off is named as partial wherever it is offered.
        const openTo = openYearTo(
          years.map((period) => ({ period })),
          snapshot.meta.cutoff_date,
        );
        const open = openTo ? openTo.slice(0, 4) : null;
        const body = html`<h1>Research intensity of the elements${year ? ` in ${year}` : ''}</h1>
<p class="muted">Each element coloured by RIS, its research intensity score (0-100, log scale, relative to the most-researched element), ${year ? `for papers published in ${year}${year === open ? ` (a partial year: papers to ${openTo})` : ''}` : `for the 12 months to ${snapshot.meta.window_end}`}. Data version ${snapshot.version}.</p>
<form class="year" method="get" action="/"><label for="year">Year</label>
<select id="year" name="year"><option value="">Last 12 months</option>${years.map((y) => html`<option value="${y}"${y === year ? html` selected` : html``}>${y}${y === open ? ` (to ${openTo})` : ''}</option>`)}</select>
<button type="submit">Show</button>${navYears(years, year)}</form>
<div class="legend" aria-label="Legend: RIS">RIS: ${BINS.map((lower, i) => html`<span><i class="b${i}"></i> ${i === BINS.length - 1 ? `${lower}+` : `${lower}-${BINS[i + 1]}`}</span>`)}</div>
<p class="scroll-cue">The table is wider than this screen: scroll it sideways for all 18 groups →</p>
<div class="ptable-wrap" tabindex="0" role="region" aria-label="Periodic table (scrolls sideways on a narrow screen)"><div class="ptable">${cells.map(
          (x) => {
            const tip = `${x.e.name}: RIS ${risText(x.ris)}, RI ${riText(x.ri)}, ${countOf(x.papers, 'paper')}`;
            return html`<a class="b${bin(x.ris)} c${x.col} r${x.row}" href="/elements/${x.e.symbol}" data-tip="${tip}"><b>${x.e.symbol}</b><span>${x.ris.toFixed(0)}</span><i class="sr"> ${tip}</i></a>`;
          },
        )}</div></div>
${howToRead(deps.edition)}
<h2>Use the data</h2>
<ul><li>REST API: <a href="/docs">reference</a>, <a href="/v1/elements">/v1/elements</a> (free, no key; as a spreadsheet: <a href="/v1/elements?format=csv">CSV</a>).</li>
<li>MCP tool server for AI agents: <code>${deps.publicUrl}/mcp</code>; agent skill: <a href="/skill.md">skill.md</a>, <a href="/v1/skill">download</a>.</li>
<li>Plans and per-call prices: <a href="/pricing">pricing</a>.</li></ul>`;
        return deps.site.page('Periodic table', body, {
          description: `The 118 chemical elements coloured by research intensity (RIS), ${year ? `for papers published in ${year}` : `for the 12 months to ${snapshot.meta.window_end}`}, from a corpus of scientific papers (OpenAlex).`,
          url: `${deps.publicUrl}/${year ? `?year=${year}` : ''}`,
        });
      });
      return c.html(text, 200, cacheable);
    });
  app.get('/', table);
  app.get('/elements', table);

  app.get('/elements/:symbol', async (c) => {
    const session = await deps.sessions.current(c);
    const viewer = sessionViewer(session, deps);
    const papersOpen = sessionAllows(session, 'getElementPapers', deps.edition);
    return withSnapshot(c, (snapshot) => {
      const e = getElement(snapshot, c.req.param('symbol'), viewer);
      // Rendered once per snapshot, element and reader (a visitor, or an account's plan).
      const text = snapshot.memoize(`web:element:${e.symbol}:${session?.plan ?? 'visitor'}`, () => {
        const series = elementHistory(snapshot, e.symbol, 'yearly', viewer).series;
        const cutoff = snapshot.meta.cutoff_date;
        const papers = papersOpen
          ? elementPapers(snapshot, e.symbol, { sort: 'impact', limit: PAPERS_SHOWN }, viewer)
          : null;
        const personal = requiredName('personal', deps.edition);
        const body = html`<p class="back"><a href="/">← Periodic table</a></p>
<h1>${e.name} (${e.symbol})</h1>
<p class="muted">Atomic number ${e.atomic_number}, period ${e.period}${e.group === null ? '' : `, group ${e.group}`}. Data version ${snapshot.version}.</p>
${feedLink(`${deps.publicUrl}${feedPath('element', e.symbol)}`, `the changes of ${e.name}`, true, '')}
<table class="data"><tbody>
<tr><th scope="row">RI (research intensity)</th><td>${riText(e.ri)}</td></tr>
<tr><th scope="row">RIS (research intensity score)</th><td>${risText(e.ris)}</td></tr>
<tr><th scope="row">HRI (high-impact research intensity)</th><td>${e.hri === null && !viewer.hriAvailable ? html`Shown with ${personal} (<a href="/pricing#plans">plans</a>)` : hriText(e.hri, snapshot.meta, `names ${e.name}`)}</td></tr>
<tr><th scope="row">Papers naming it (all years)</th><td>${countText(e.paper_count)}</td></tr>
</tbody></table>
${risByYear(e.name, series, cutoff)}
${historyChart(series, (p) => p.ri, {
  title: `${e.name}: RI by year (papers per 10,000)`,
  unit: 'RI',
  cutoff,
  format: riText,
})}
${
  papers
    ? paperList(papers.papers, papers.total_ranked, {
        csvHref: `/elements/${e.symbol}/papers.csv`,
        apiPath: `/v1/elements/${e.symbol}/papers?limit=100`,
      })
    : html`<h2 id="papers">Top papers</h2>${planNote(`its top papers (the ${PAPERS_SHOWN} with most impact here, up to 100 by download)`, personal, session)}`
}
${howToRead(deps.edition)}
${embedSnippet({
  publicUrl: deps.publicUrl,
  page: e.canonical_url,
  badge: badgePath('element', e.symbol),
  sparkline: badgePath('element', e.symbol, true),
  alt: `${e.name} (${e.symbol}): research intensity score (RIS)`,
  tokenNeeded: operation('getElementBadge').access !== 'public',
  plan: personal,
})}
<h2>More on ${e.name}</h2>
${elementApi(e.symbol, session, deps)}`;
        return deps.site.page(`${e.name} (${e.symbol})`, body, {
          description: `Research intensity of ${e.name} (${e.symbol}): RI ${riText(e.ri)} papers per 10,000, RIS ${risText(e.ris)} of 100, ${countOf(e.paper_count, 'paper')} naming it; its history by year.`,
          url: `${deps.publicUrl}/elements/${e.symbol}`,
          feed: {
            href: `${deps.publicUrl}${feedPath('element', e.symbol)}`,
            title: `${e.name} (${e.symbol}): changes in research intensity`,
          },
        });
      });
      return c.html(text, 200, pageHeaders(session));
    });
  });

  // A ranked paper list as a file for the signed-in reader whose plan opens it: the same core
  // answer and the same CSV as `format=csv` on the API (which needs a key).
  const papersCsv = async (
    c: Context,
    id: OperationId,
    answer: (
      snapshot: Snapshot,
      viewer: Viewer,
    ) => { papers: PaperEntry[]; canonical_url: string; data_version: string },
    name: (snapshot: Snapshot) => string,
  ) => {
    const session = await deps.sessions.current(c);
    if (!sessionAllows(session, id, deps.edition))
      return c.html(
        deps.site.page(
          'Plan needed',
          html`<h1>This download needs a plan</h1>${planNote('paper lists', requiredName('personal', deps.edition), session)}`,
        ),
        session ? 403 : 401,
        pageHeaders(session),
      );
    return withSnapshot(c, (snapshot) => {
      const a = answer(snapshot, sessionViewer(session, deps));
      return c.body(toCsv(papersTable(a)), 200, {
        'content-type': CSV_TYPE,
        'content-disposition': `attachment; filename="${name(snapshot)}"`,
        link: `<${a.canonical_url}>; rel="canonical"`,
        'ri-data-version': a.data_version,
        ...pageHeaders(session),
      });
    });
  };
  app.get('/elements/:symbol/papers.csv', (c) =>
    papersCsv(
      c,
      'getElementPapers',
      (snapshot, v) => elementPapers(snapshot, c.req.param('symbol'), { sort: 'impact', limit: 100 }, v),
      (snapshot) => `${canonicalSymbol(c.req.param('symbol'))}-papers-${snapshot.version}.csv`,
    ),
  );
  app.get('/subjects/:type/:id/papers.csv', (c) =>
    papersCsv(
      c,
      'getSubjectPapers',
      (snapshot, v) => {
        const type = c.req.param('type');
        if (type !== 'topic' && type !== 'keyword')
          throw new ServiceError('not_found', `No subject type '${type}'.`);
        return subjectPapers(snapshot, type, c.req.param('id'), { sort: 'impact', limit: 100 }, v);
      },
      (snapshot) =>
        `${c.req.param('type')}-${c.req.param('id').replace(/[^A-Za-z0-9_-]/g, '_')}-papers-${snapshot.version}.csv`,
    ),
  );

  registerAnswerPages(app, deps);

  app.get('/docs/errors', (c) =>
    c.html(
      deps.site.page(
        'Errors',
        html`<h1>Errors</h1>
<p>Every error is an RFC 9457 <code>application/problem+json</code> body with <code>type</code> (a link to this page), <code>title</code>, <code>status</code>, <code>detail</code>, a stable <code>code</code> and the <code>request_id</code>. Errors are never charged.</p>
<table class="data"><thead><tr><th scope="col">code</th><th scope="col">status</th><th scope="col">meaning</th></tr></thead><tbody>
${ERROR_CODES.map((e) => html`<tr id="${e.code}"><td data-label="code"><code>${e.code}</code></td><td data-label="status">${e.status}</td><td data-label="meaning">${e.title}</td></tr>`)}
</tbody></table>`,
      ),
      200,
      cacheable,
    ),
  );
}

function howToRead(edition: 'full' | 'enterprise'): Html {
  return html`<h2>How to read these numbers</h2>
<dl><dt>RI, research intensity</dt><dd>Fractional papers on the subject per 10,000 corpus papers: a share of research output, not a measure of quality or importance.</dd>
<dt>RIS, research intensity score</dt><dd>0-100, recency-weighted, on a log scale relative to the most-researched subject of the same type. Compare elements with elements, within one data version.</dd>
<dt>HRI, high-impact research intensity</dt><dd>The same share among high-impact papers only (top 10% by impact in their field and year); shown with ${requiredName('personal', edition)}.</dd></dl>`;
}

/** What the element's API gives the reader, with the key their plan has (or would need). */
function elementApi(symbol: string, session: WebSession | null, deps: WebDeps): Html {
  const plan = session?.plan ?? null;
  const opens = (level: 'personal' | 'professional') =>
    plan !== null && planAllows(plan, level, deps.edition);
  const lines: Html[] = [
    html`<li>Its scores as JSON: <a href="/v1/elements/${symbol}">/v1/elements/${symbol}</a> (free, no key), with every element's as <a href="/v1/elements?format=csv">CSV</a>.</li>`,
    html`<li>Its history by year: <code>/v1/elements/${symbol}/history</code>, with any key${plan === null ? html` (a free account: <a href="/account">sign in</a>)` : ''}; by month ${opens('personal') ? 'with your key' : html`with ${requiredName('personal', deps.edition)}`}; by day ${opens('professional') ? 'with your key' : html`with ${requiredName('professional', deps.edition)}`} (<code>resolution=monthly</code>, <code>daily</code>; <code>format=csv</code> for CSV).</li>`,
    html`<li>Its top papers: <code>/v1/elements/${symbol}/papers?limit=100</code>, ${opens('personal') ? 'with your key' : html`with ${requiredName('personal', deps.edition)} (<a href="/pricing#plans">plans</a>)`}.</li>`,
  ];
  return html`<ul>${lines}</ul>${deps.payments && !opens('professional') ? html`<p class="muted">Without a plan, each of these calls can also be paid per call (<a href="/pricing">prices</a>).</p>` : html``}`;
}

/** The grid position of an element: group and period, the f-block in two rows below. */
function position(e: ElementScore): { col: number; row: number } {
  if (e.group !== null) return { col: e.group, row: e.period };
  const lanthanide = e.atomic_number >= 57 && e.atomic_number <= 71;
  return { col: 3 + e.atomic_number - (lanthanide ? 57 : 89), row: lanthanide ? 9 : 10 };
}

/** The years of the yearly history (the same for every element), oldest first. */
function yearsOf(snapshot: Snapshot, viewer: Viewer): string[] {
  return snapshot.memoize('web:years', () =>
    elementHistory(snapshot, 'Fe', 'yearly', viewer).series.map((p) => p.period),
  );
}

/** Every element's RI, RIS and paper count in one year, read once per snapshot and year. */
function yearScores(snapshot: Snapshot, viewer: Viewer, year: string) {
  return snapshot.memoize(`web:year:${year}`, () => {
    const out = new Map<string, { ri: number; ris: number; papers: number }>();
    for (const e of listElements(snapshot, viewer).elements) {
      const p = elementHistory(snapshot, e.symbol, 'yearly', viewer).series.find((x) => x.period === year);
      out.set(e.symbol, { ri: p?.ri ?? 0, ris: p?.ris ?? 0, papers: p?.papers ?? 0 });
    }
    return out;
  });
}

/** Previous / next year links, so the years can be stepped through without a script. */
function navYears(years: string[], year: string | null): Html {
  if (years.length === 0) return html``;
  const i = year ? years.indexOf(year) : years.length;
  const prev = i > 0 ? years[i - 1] : null;
  const next = year && i < years.length - 1 ? years[i + 1] : null;
  return html`${prev ? html`<a href="/?year=${prev}" rel="prev">← ${prev}</a>` : html``} ${next ? html`<a href="/?year=${next}" rel="next">${next} →</a>` : year ? html`<a href="/">last 12 months →</a>` : html``}`;
}
