/** Small helpers for the server-rendered pages: escaping, the shared layout and stylesheet. */

import { type Edition, isPriced, operation, requiredPlan } from '../access/policy.js';

const ENTITIES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Escapes text for HTML content and attribute values. */
export function esc(value: unknown): string {
  return String(value ?? '').replace(/[&<>"']/g, (ch) => ENTITIES[ch]!);
}

/** A tagged template whose interpolations are escaped unless they are Html already. */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0]!;
  values.forEach((v, i) => {
    const part = Array.isArray(v)
      ? v.map((x) => (x instanceof Html ? x.text : esc(x))).join('')
      : v instanceof Html
        ? v.text
        : esc(v);
    out += part + strings[i + 1]!;
  });
  return new Html(out);
}

export const raw = (text: string) => new Html(text);

/** What a page says of itself when it says nothing more particular (search results, link previews). */
const DEFAULT_DESCRIPTION =
  'Research-intensity scores (RI, RIS, HRI) for the 118 chemical elements and for research topics and keywords, from a corpus of scientific papers (OpenAlex).';

/**
 * The visible link to a subject's feed, with what a feed reader needs to open it: nothing for an
 * open feed, else a feed token from the account page (never the API key).
 */
export function feedLink(href: string, what: string, open: boolean, plan: string): Html {
  return html`<p class="feed"><a href="${href}" type="application/atom+xml">Follow ${what} in a feed reader (Atom)</a>${
    open
      ? html``
      : html`: add <code>?token=</code> and a feed token from <a href="/account">your account</a> (${plan}) to the address; an API key never goes in it`
  }.</p>`;
}

/** Site-wide pages that answer questions, each with the operation whose access it follows. */
const ASKING_PAGES = [
  { href: '/research', label: 'Research', op: 'research' },
  { href: '/lab', label: 'Lab', op: 'labQuote' },
] as const;

/**
 * What one server's pages share: the header (the brand, the navigation, the search box) and the
 * layout. The navigation names every page this edition serves, research and the lab with what
 * each needs (the plan from the access table, and pay-per-call where this server takes it); the
 * older edition serves neither, so names neither.
 */
export class Site {
  readonly header: string;

  constructor(readonly options: { edition: Edition; payments: boolean }) {
    const asking =
      options.edition === 'full'
        ? ASKING_PAGES.map(({ href, label, op }) => {
            const o = operation(op);
            const level = o.access === 'professional' ? 'professional' : 'personal';
            const plan = requiredPlan(level, options.edition);
            const needs = `${plan[0]!.toUpperCase()}${plan.slice(1)} plan${options.payments && isPriced(o) ? ' or per call' : ''}`;
            return `<a href="${href}">${label}<span class="needs"> (${needs})</span></a>`;
          }).join('')
        : '';
    this.header = `<header class="site"><a class="brand" href="/">Research Intensity</a>
<nav aria-label="Site"><a href="/">Periodic table</a>${asking}<a href="/pricing">Pricing</a><a href="/docs">API</a><a href="/account">Account</a></nav>
<form class="search" role="search" method="get" action="/subjects/search"><label for="site-q">Search elements and topics</label><input id="site-q" name="q" type="search" required maxlength="200"><button type="submit">Search</button></form></header>`;
  }

  /**
   * A page: one stylesheet from this server, no script, the header; a description and OpenGraph
   * tags for search results and link previews (`url`: the page's own address, its canonical link).
   */
  page(
    title: string,
    body: Html,
    options: { description?: string; url?: string; feed?: { href: string; title: string } } = {},
  ): string {
    const description = options.description ?? DEFAULT_DESCRIPTION;
    const url = options.url
      ? `<link rel="canonical" href="${esc(options.url)}">\n<meta property="og:url" content="${esc(options.url)}">\n`
      : '';
    // A feed reader given the page finds its feed here (feed autodiscovery).
    const feed = options.feed
      ? `<link rel="alternate" type="application/atom+xml" title="${esc(options.feed.title)}" href="${esc(options.feed.href)}">\n`
      : '';
    return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)} · Research Intensity</title>
<meta name="description" content="${esc(description)}">
<meta property="og:type" content="website">
<meta property="og:site_name" content="Research Intensity">
<meta property="og:title" content="${esc(title)}">
<meta property="og:description" content="${esc(description)}">
${url}${feed}<link rel="icon" href="/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/assets/site.css">
</head>
<body>
${this.header}
<main>
${body.text}
</main>
<footer class="site"><p>Scores computed from OpenAlex works (CC0). API at <a href="/v1/openapi.json">/v1</a>, MCP at <code>/mcp</code>, agent skill at <a href="/v1/skill">/v1/skill</a>.</p></footer>
</body>
</html>`;
  }

  /** A reader's mistake as a page: what went wrong, and the way home. */
  errorPage(title: string, detail: string): string {
    return this.page(title, html`<h1>${title}</h1><p>${detail}</p><p><a href="/">The periodic table</a></p>`);
  }
}

// Grid places for the periodic table: classes, not style attributes (the CSP allows no inline style).
const GRID = [
  ...Array.from({ length: 18 }, (_, i) => `.c${i + 1}{grid-column:${i + 1}}`),
  ...Array.from({ length: 10 }, (_, i) => `.r${i + 1}{grid-row:${i + 1}}`),
  // Tooltips of the right half open leftwards, so they stay on the page.
  `${Array.from({ length: 9 }, (_, i) => `.ptable a.c${i + 10}::after`).join(',')}{left:auto;right:0}`,
].join('');

/** The one stylesheet (served at /assets/site.css, cached). */
export const SITE_CSS = `${GRID}
:root{--ink:#1b1f24;--muted:#57606a;--line:#d0d7de;--bg:#fff;--accent:#0b5cad;font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--ink);background:var(--bg)}
body{margin:0;line-height:1.5}
a{color:var(--accent)}
a:focus-visible{outline:3px solid #f0a500;outline-offset:2px}
header.site,footer.site{display:flex;flex-wrap:wrap;gap:1rem;align-items:center;justify-content:space-between;padding:.75rem 1.25rem;border-bottom:1px solid var(--line)}
footer.site{border-top:1px solid var(--line);border-bottom:0;color:var(--muted);font-size:.9rem}
header.site nav{display:flex;gap:.25rem 1rem;flex-wrap:wrap}
header.site nav a,footer.site a{display:inline-block;min-height:24px;min-width:24px;text-align:center}
header.site nav a{overflow-wrap:normal;text-align:left}
header.site nav .needs{display:block;font-size:.75rem;line-height:1.2;color:var(--muted)}
main li>a,main td>a,main dd>a,p.back>a{display:inline-block;min-height:24px}
main li>a{vertical-align:top}/* a wrapping link keeps its list number by its first line, not its last (its baseline) */
form.search{display:flex;gap:.4rem;align-items:center;flex-wrap:wrap}
form.search input{width:12rem;max-width:100%}
.brand{font-weight:700;text-decoration:none;color:var(--ink)}
main{max-width:1200px;margin:0 auto;padding:1rem 1.25rem}
h1{font-size:1.6rem;margin:.5rem 0}
.muted{color:var(--muted)}
table.data{border-collapse:collapse;margin:1rem 0}
.scroll{overflow-x:auto;max-width:100%}
table.data th,table.data td{border:1px solid var(--line);padding:.35rem .6rem;text-align:left}
.ptable{display:grid;grid-template-columns:repeat(18,minmax(0,1fr));gap:3px;margin:1rem 0}
.ptable a{position:relative;display:block;aspect-ratio:1/1;border-radius:4px;text-decoration:none;color:#111;padding:2px 3px;font-size:.75rem;border:1px solid rgba(0,0,0,.15)}
.ptable a:hover::after,.ptable a:focus-visible::after{content:attr(data-tip);position:absolute;z-index:2;left:0;top:100%;margin-top:4px;white-space:nowrap;background:#1b1f24;color:#fff;padding:.3rem .5rem;border-radius:4px;font-size:.8rem;font-weight:400;pointer-events:none}
.ptable a b{display:block;font-size:1.05rem;line-height:1.1}
.ptable a span{display:block}
.ptable .gap{grid-column:1/-1;height:.6rem}
.b0{background:#f3f6f9}.b1{background:#d6e6f5}.b2{background:#a9cbe8}.b3{background:#6fa7d6;color:#000}.b4{background:#245f9e;color:#fff!important}.b5{background:#174f8a;color:#fff!important}
.b4 *,.b5 *{color:#fff}
.legend{display:flex;flex-wrap:wrap;gap:.5rem;align-items:center;font-size:.85rem}
.legend i{display:inline-block;width:1.2rem;height:1rem;border:1px solid rgba(0,0,0,.2);vertical-align:middle}
form.year{display:flex;gap:.5rem;align-items:center;flex-wrap:wrap}
.chart{max-width:720px;width:100%;height:auto}
figure{margin:1rem 0}
form.stack{display:flex;flex-direction:column;gap:.4rem;max-width:28rem;margin:1rem 0}
input,button{font:inherit;padding:.4rem .6rem;border:1px solid #8c959f;border-radius:4px}
button{background:var(--accent);color:#fff;border-color:var(--accent);cursor:pointer}
button:focus-visible,input:focus-visible,select:focus-visible,textarea:focus-visible{outline:3px solid #f0a500;outline-offset:2px}
table.data form{margin:0}
table.data button{padding:.15rem .5rem}
.problem{border-left:4px solid #b42318;padding:.4rem .8rem;background:#fef3f2}
.newkey{border:2px solid #1a7f37;padding:.5rem 1rem;border-radius:6px;background:#f0fff4}
input.key{width:100%;max-width:40rem;font-family:ui-monospace,monospace}
code{overflow-wrap:anywhere}
.sr{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap;font-size:1rem}
main li{margin:.4rem 0}
.plans{display:grid;grid-template-columns:repeat(auto-fit,minmax(15rem,1fr));gap:1rem;margin:1rem 0}
.plan{border:1px solid var(--line);border-radius:6px;padding:.25rem 1rem}
.plan h3{margin:.5rem 0 0}
.plan .price{font-size:1.25rem;font-weight:700;margin:.25rem 0}
a.ask{display:inline-block;padding:.35rem .7rem;border:1px solid var(--accent);border-radius:4px;font-weight:600;text-decoration:none;min-height:24px}
textarea,select{font:inherit;padding:.4rem .6rem;border:1px solid #8c959f;border-radius:4px;max-width:100%}
.embed label{display:block;font-weight:600}
.embed textarea{display:block;box-sizing:border-box;width:100%;max-width:48rem;margin:.2rem 0 .75rem;font-family:ui-monospace,monospace;font-size:.85rem}
.gate{border-left:4px solid var(--accent);padding:.4rem .8rem;background:#f3f8fd}
dl.facts{display:grid;grid-template-columns:max-content minmax(0,1fr);gap:.2rem 1rem}
dl.facts dd{margin:0}
main a{overflow-wrap:break-word}
a.url{overflow-wrap:anywhere}
code.query{white-space:pre-wrap;overflow-wrap:anywhere;font-size:1rem}
code.query mark{background:#ffd33d;color:#1b1f24;outline:2px solid #b42318;border-radius:2px}
.scroll-cue{display:none}
ul.found li{margin:.3rem 0}
select,button,input{min-height:32px}
@media (max-width:700px){svg.chart text{font-size:26px}svg.chart text.minor{display:none}svg.chart circle{r:6px}.ptable-wrap{overflow-x:auto;mask-image:linear-gradient(to right,#000 calc(100% - var(--fade)),transparent);animation:scrolled linear both;animation-timeline:scroll(self inline)}.scroll-cue{display:block;font-size:.9rem;margin:.5rem 0 0}.ptable{grid-template-columns:repeat(18,2.4rem);width:max-content}.ptable a{padding:1px 2px}.ptable a b{font-size:.95rem}.ptable a span{font-size:.75rem}main{padding:.75rem}header.site{padding:.6rem .75rem}form.search input{flex:1 1 8rem}table.data,table.data tbody,table.data tr,table.data td,table.data th[scope=row],table.data caption{display:block}table.data caption{text-align:left;font-weight:600}table.data thead{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0)}table.data tr{border:1px solid var(--line);border-radius:4px;margin:.5rem 0;padding:.3rem .6rem}table.data th,table.data td{border:0;padding:.1rem 0}table.data td[data-label]:not(:first-child)::before{content:attr(data-label) ": ";font-weight:600}table.data tbody th[scope=row]{font-weight:600}}
@property --fade{syntax:'<length>';inherits:false;initial-value:40px}
@keyframes scrolled{to{--fade:0px}}
`;
