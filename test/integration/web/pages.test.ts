import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { esc } from '../../../src/web/html.js';
import { countText, risText, riText } from '../../../src/web/numbers.js';
import { bearer } from '../../helpers/app.js';
import { Browser, signInByMail, smtpSink } from '../../helpers/web.js';
import { servedSample } from '../../helpers/x402.js';

/**
 * Every canonical page shows its reader what the reader may see, over real HTTP: a visitor (no
 * session), a free account, a Personal and a Professional one (signed in by the emailed link,
 * their plans set as an operator sets them).
 */
let sink: Awaited<ReturnType<typeof smtpSink>>;
let served: Awaited<ReturnType<typeof servedSample>>;
let base: string;
const readers = {} as Record<'visitor' | 'free' | 'personal' | 'professional', Browser>;
let topic: string;
let keyword: string | undefined;

beforeAll(async () => {
  sink = await smtpSink();
  served = await servedSample({ SMTP_URL: sink.url });
  base = served.server.base;
  readers.visitor = new Browser(base);
  for (const plan of ['free', 'personal', 'professional'] as const) {
    readers[plan] = new Browser(base);
    const email = `pages.${plan}@example.org`;
    await signInByMail(readers[plan], sink.mails, email);
    if (plan !== 'free') await served.ctx.state.setPlan(email, plan);
  }
  const search = (await (
    await fetch(`${base}/v1/subjects/search?q=oxygen%20evolution`, bearer(served.ctx.keys.free))
  ).json()) as { results: { subject_type: string; subject_id: string }[] };
  topic = search.results.find((r) => r.subject_type === 'topic')!.subject_id;
  keyword = search.results.find((r) => r.subject_type === 'keyword')?.subject_id;
}, 120_000);

afterAll(async () => {
  await served?.close();
  await sink?.close();
});

const text = async (reader: keyof typeof readers, path: string) => {
  const r = await readers[reader].get(path);
  expect(r.status, `${reader} ${path}`).toBe(200);
  return r.text();
};

/** No heading that ends in a colon with nothing after it ("Research:"). */
const emptyHeadings = (page: string) =>
  [...page.matchAll(/<h[1-3][^>]*>[^<]*:\s*<\/h[1-3]>/g)].map((m) => m[0]);
/** The pages whose links the link checks follow: one of each kind a reader lands on. */
const linkedPages = () => [
  '/',
  '/elements/Fe',
  `/subjects/topic/${topic}`,
  '/subjects/search?q=oxygen',
  '/pricing',
];

/** The links that do not answer 200 to this reader, as "status link". */
async function brokenLinks(reader: Browser, links: Iterable<string>): Promise<string[]> {
  const broken: string[] = [];
  for (const link of links) {
    const r = await reader.get(link);
    await r.text();
    if (r.status !== 200) broken.push(`${r.status} ${link}`);
  }
  return broken;
}

const SEARCH_BOX = /<form class="search" role="search" method="get" action="\/subjects\/search">/;

describe('the element page for each reader', () => {
  it('a visitor: scores and charts, no HRI and no papers, and the way to them', async () => {
    const page = await text('visitor', '/elements/Fe');
    expect(page).toMatch(SEARCH_BOX);
    expect(page.match(/<svg class="chart"/g)?.length).toBe(2);
    expect(page).toContain('Shown with the Personal plan');
    expect(page).not.toMatch(/<ol class="papers">/);
    expect(page).toMatch(
      /Its top papers \(the 20 with most impact here, up to 100 by download\) are shown with the Personal plan: <a href="\/account">sign in<\/a>/,
    );
    expect(page).not.toMatch(/need a key/);
    expect(emptyHeadings(page)).toEqual([]);
  });

  it('a free account: told its plan lacks papers and HRI, not to get a key', async () => {
    const page = await text('free', '/elements/Fe');
    expect(page).toContain('Your plan is free: its top papers');
    expect(page).not.toMatch(/<ol class="papers">/);
    expect(page).not.toMatch(/need a key/);
  });

  it('Personal and Professional: HRI, the top 20 papers and all of them as CSV', async () => {
    const api = (await (
      await fetch(`${base}/v1/elements/Fe/papers?limit=100`, bearer(served.ctx.keys.personal))
    ).json()) as { total_ranked: number; papers: { title: string | null }[] };
    for (const plan of ['personal', 'professional'] as const) {
      const page = await text(plan, '/elements/Fe');
      expect(page).not.toContain('Shown with the Personal plan');
      expect(page).toMatch(/<th scope="row">HRI \(high-impact research intensity\)<\/th><td>\d/);
      const listed = page.split('<ol class="papers">')[1]!.split('</ol>')[0]!;
      expect(listed.match(/<li>/g)?.length).toBe(Math.min(20, api.total_ranked));
      expect(page).toContain('<a href="/elements/Fe/papers.csv" download>CSV download</a>');
      expect(page).not.toMatch(/need a key|Your plan is/);
      const csv = await readers[plan].get('/elements/Fe/papers.csv');
      expect(csv.status).toBe(200);
      expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
      expect(csv.headers.get('content-disposition')).toMatch(/attachment; filename="Fe-papers-/);
      const body = await csv.text();
      // The same CSV as the API's format=csv with a key.
      const fromApi = await (
        await fetch(`${base}/v1/elements/Fe/papers?limit=100&format=csv`, bearer(served.ctx.keys.personal))
      ).text();
      expect(body).toBe(fromApi);
      expect(body.trimEnd().split('\r\n').length).toBe(api.papers.length + 1);
    }
    expect(await text('personal', '/elements/Fe')).toContain('by day with the Professional plan');
    expect(await text('professional', '/elements/Fe')).toContain('by day with your key');
  });

  it('the CSV download is refused without the plan: 401 for a visitor, 403 for a free account', async () => {
    expect((await readers.visitor.get('/elements/Fe/papers.csv')).status).toBe(401);
    expect((await readers.free.get('/elements/Fe/papers.csv')).status).toBe(403);
    expect((await readers.free.get(`/subjects/topic/${topic}/papers.csv`)).status).toBe(403);
  });
});

describe('every page', () => {
  it('has the search box, and writes RI, RIS and HRI one way', async () => {
    for (const path of [
      '/',
      '/elements/Fe',
      `/subjects/topic/${topic}`,
      '/subjects/search?q=oxygen',
      '/research?q=x',
      '/lab?q=Ni',
      '/pricing',
      '/account',
      '/docs/errors',
      '/docs',
    ])
      for (const reader of ['visitor', 'personal'] as const)
        expect(await text(reader, path), `${reader} ${path}`).toMatch(SEARCH_BOX);
    const fe = (await (await fetch(`${base}/v1/elements/Fe`, bearer(served.ctx.keys.personal))).json()) as {
      ri: number;
      ris: number;
      hri: number;
    };
    const page = await text('personal', '/elements/Fe');
    expect(page).toContain(`<th scope="row">RI (research intensity)</th><td>${riText(fe.ri)}</td>`);
    expect(page).toContain(`<th scope="row">RIS (research intensity score)</th><td>${risText(fe.ris)}</td>`);
    // An HRI of 0 is said with why (the window's high-impact papers); any other in the one format.
    expect(page).toContain(
      `<th scope="row">HRI (high-impact research intensity)</th><td>${fe.hri === 0 ? '0 <span class="muted">(none of the' : `${riText(fe.hri)}</td>`}`,
    );
    const home = await text('visitor', '/');
    expect(home).toContain(`Iron: RIS ${risText(fe.ris)}, RI ${riText(fe.ri)},`);
  });

  it('links only to pages that answer 200, for a visitor and a plan holder alike', async () => {
    const failures: string[] = [];
    for (const reader of ['visitor', 'personal'] as const) {
      const links = new Set<string>();
      for (const path of linkedPages())
        for (const m of (await text(reader, path)).matchAll(/href="(\/[^"]*)"/g))
          links.add(m[1]!.replaceAll('&amp;', '&'));
      for (const broken of await brokenLinks(readers[reader], links)) failures.push(`${reader} ${broken}`);
    }
    expect(failures).toEqual([]);
  });

  it('draws the year open at the data cut-off as partial on element and subject charts', async () => {
    const versions = (await (await fetch(`${base}/v1/versions`)).json()) as {
      versions: { data_version: string; cutoff_date: string | null }[];
    };
    const cutoff = versions.versions.find((v) => v.cutoff_date)!.cutoff_date!;
    expect(cutoff.endsWith('-12-31')).toBe(false); // the sample's corpus ends inside a year
    const year = cutoff.slice(0, 4);
    // The table offers the open year as partial, and says so when it is chosen.
    expect(await text('visitor', '/')).toContain(`<option value="${year}">${year} (to ${cutoff})</option>`);
    expect(await text('visitor', `/?year=${year}`)).toContain(`(a partial year: papers to ${cutoff})`);
    for (const path of ['/elements/Fe', `/subjects/topic/${topic}`]) {
      const page = await text('personal', path);
      expect(page, path).toContain(`(*${year}: papers to ${cutoff} only, a partial period, dashed)`);
      expect(page, path).toContain('stroke-dasharray="5 4"');
    }
  });
});

describe('the subject page for each reader', () => {
  it('a visitor and a free account: name, description, field and OpenAlex record, then the way on', async () => {
    const api = (await (
      await fetch(`${base}/v1/subjects/topic/${topic}`, bearer(served.ctx.keys.personal))
    ).json()) as { name: string; description: string | null; field: string | null; ri: number };
    for (const reader of ['visitor', 'free'] as const) {
      const page = await text(reader, `/subjects/topic/${topic}`);
      expect(page).toContain(`<h1>Topic: ${api.name}</h1>`);
      if (api.description) expect(page).toContain(api.description);
      if (api.field) expect(page).toContain(`<dt>Field</dt><dd>${api.field}</dd>`);
      expect(page).toContain(`<a class="url" href="https://openalex.org/${topic}">`);
      expect(page).not.toMatch(/<th scope="row">RI<\/th>/);
      expect(page).not.toMatch(/<ol class="papers">/);
      expect(page).toMatch(reader === 'visitor' ? /<a href="\/account">sign in<\/a>/ : /Your plan is free/);
      expect(page).toMatch(SEARCH_BOX);
      expect(emptyHeadings(page)).toEqual([]);
    }
  });

  it('Personal: scores, history, the elements it is routed to, top papers and the CSV', async () => {
    const elements = (await (
      await fetch(`${base}/v1/subjects/topic/${topic}/elements`, bearer(served.ctx.keys.personal))
    ).json()) as { elements: { symbol: string }[] };
    const page = await text('personal', `/subjects/topic/${topic}`);
    expect(page).toMatch(/<th scope="row">HRI<\/th><td>\d/);
    expect(page).toContain('<svg class="chart"');
    const routed = page.split('<h2 id="elements">')[1]!.split('<h2')[0]!;
    expect([...routed.matchAll(/href="\/elements\/(\w+)"/g)].map((m) => m[1])).toEqual(
      elements.elements.map((e) => e.symbol),
    );
    expect(page).toMatch(/<ol class="papers"><li>/);
    expect(page).toContain(`<a href="/subjects/topic/${topic}/papers.csv" download>`);
    const csv = await readers.personal.get(`/subjects/topic/${topic}/papers.csv`);
    expect(csv.status).toBe(200);
    expect((await csv.text()).split('\r\n')[0]).toMatch(/^title,doi,/);
  });
});

describe('search, research and lab pages for each reader', () => {
  it('search: topic names for a visitor, topics and keywords with counts for an account', async () => {
    const visitor = await text('visitor', '/subjects/search?q=oxygen%20evolution');
    expect(visitor).toContain(`href="/subjects/topic/${topic}"`);
    expect(visitor).not.toContain('/subjects/keyword/');
    expect(visitor).toMatch(
      /Keywords, paper counts and why each subject matched are shown to any signed-in account/,
    );
    const free = await text('free', '/subjects/search?q=oxygen%20evolution');
    expect(free).toContain(`href="/subjects/topic/${topic}"`);
    if (keyword) expect(free).toContain(`href="/subjects/keyword/${encodeURIComponent(keyword)}"`);
    expect(free).toContain('<th scope="col">Why it matched</th>');
    // An empty search asks; every page has the box.
    expect(await text('visitor', '/subjects/search')).toContain('<input id="q" name="q"');
  });

  it('research and lab: the question for everyone, no empty heading or broken copy', async () => {
    for (const reader of ['visitor', 'free'] as const) {
      for (const path of ['/research', '/lab']) {
        const page = await text(reader, path);
        expect(emptyHeadings(page), `${reader} ${path}`).toEqual([]);
        expect(page).not.toMatch(/This answer is resolves/);
        expect(page).toMatch(
          path === '/research'
            ? /A research answer holds the research communities/
            : /A lab query gets a binding quote/,
        );
      }
      const research = await text(reader, '/research?q=oxygen%20evolution%20nickel');
      expect(research).toContain('<h1>Research: oxygen evolution nickel</h1>');
      expect(research).toContain('The answer holds the research communities behind a question');
      const lab = await text(reader, '/lab?q=Ni%20Fe');
      expect(lab).toContain('<h1>Lab query: Ni Fe</h1>');
      expect(lab).toContain('the Professional plan');
    }
    expect(await text('personal', '/research?q=oxygen%20evolution%20nickel')).toMatch(/matching papers/);
    expect(await text('professional', '/lab?q=Ni%20Fe')).toMatch(/\d+ matching papers/);
  });
});

describe('what the research and lab answers say of the question, on their pages', () => {
  /** The page's text as a reader reads it, without the API addresses it prints. */
  const shown = (page: string) =>
    page
      .split('<main>')[1]!
      .split('</main>')[0]!
      .replace(/<code>\/v1\/[^<]*<\/code>/g, '');
  const unescaped = (s: string) =>
    s.replace(
      /&(quot|#39|lt|gt|amp);/g,
      (_, e: string) => ({ quot: '"', '#39': "'", lt: '<', gt: '>', amp: '&' })[e]!,
    );
  const api = async <T>(path: string, key: string) => {
    const r = await fetch(`${base}${path}`, bearer(key));
    expect(r.status, path).toBe(200);
    return (await r.json()) as T;
  };

  it("lab: the form's own example is a filter the service quotes", async () => {
    const form = await text('professional', '/lab');
    const label = /<label for="q">([\s\S]*?)<\/label>/.exec(form)![1]!;
    const example = unescaped(
      label
        .split(/for example:?/)[1]!
        .replace(/<[^>]+>/g, '')
        .trim(),
    );
    expect(example).not.toBe('');
    const q = new URLSearchParams({ q: example });
    const quote = await api<{ quote_id: string; matches: number }>(
      `/v1/lab/quote?${q}`,
      served.ctx.keys.professional,
    );
    expect(quote.quote_id).not.toBe('');
    expect(await text('professional', `/lab?${q}`)).toContain(`${countText(quote.matches)} matching papers`);
  });

  it('lab: every term the quote ignores is listed with its reason', async () => {
    const q = new URLSearchParams({ q: 'Fe Ni -Zzzz' });
    const quote = await api<{ ignored: { term: string; reason: string }[] }>(
      `/v1/lab/quote?${q}`,
      served.ctx.keys.professional,
    );
    expect(quote.ignored.length).toBeGreaterThan(0);
    const page = shown(await text('professional', `/lab?${q}`));
    for (const t of quote.ignored) expect(page).toContain(`<code>${esc(t.term)}</code>: ${esc(t.reason)}`);
  });

  it('research: the words found nowhere, and why a list is empty, as the API says them', async () => {
    const q = new URLSearchParams({ q: 'oxygen evolution nickel qwzzx' });
    const answer = await api<{
      unmatched_terms: string[];
      communities: unknown[];
      lists: Record<string, unknown[]>;
      notes: { empty?: string };
    }>(`/v1/research?${q}`, served.ctx.keys.personal);
    expect(answer.unmatched_terms.length).toBeGreaterThan(0);
    const page = shown(await text('personal', `/research?${q}`));
    for (const t of answer.unmatched_terms) expect(page).toContain(`<code>${esc(t)}</code>`);
    // Each empty list of the page is shown with the reason the notes give for it.
    const empty = [
      ...Object.entries(answer.lists)
        .filter(([, l]) => l.length === 0)
        .map(([lens]) => lens),
      ...(answer.communities.length === 0 ? ['communities'] : []),
    ];
    expect(empty.length).toBeGreaterThan(0);
    for (const list of empty) {
      const why = new RegExp(`${list} is empty: (.+?)(?= \\w+ is empty: |$)`).exec(answer.notes.empty ?? '');
      expect(why, list).not.toBeNull();
      expect(page).toContain(`None: ${esc(why![1]!)}`);
    }
  });
});

/** The page's main text with tags, API addresses and the data version taken out, entities read. */
const words = (page: string) =>
  page
    .split('<main>')[1]!
    .split('</main>')[0]!
    // What is there to copy (code, an embed snippet's text) is not prose.
    .replace(/<code[^>]*>[^<]*<\/code>|<textarea[^>]*>[^<]*<\/textarea>/g, ' ')
    .replace(/<[^>]+>/g, ' ')
    .replace(/&#39;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, '&');

describe('a site to move around in', () => {
  /** Every page kind a reader lands on, the header's links on each. */
  const kinds = () => [
    '/',
    '/elements/Fe',
    `/subjects/topic/${topic}`,
    '/subjects/search?q=iron',
    '/research?q=oxygen%20evolution%20nickel',
    '/lab?q=Ni%20Fe',
    '/pricing',
    '/account',
    '/docs/errors',
    '/docs',
  ];

  it('names Research and Lab in every page header, with the plan each needs, for every reader', async () => {
    for (const reader of ['visitor', 'free', 'professional'] as const)
      for (const path of kinds()) {
        const page = await text(reader, path);
        const nav = /<nav aria-label="Site">([\s\S]*?)<\/nav>/.exec(page)?.[1] ?? '';
        expect(nav, `${reader} ${path}`).toContain(
          '<a href="/research">Research<span class="needs"> (Personal plan)</span></a>',
        );
        expect(nav, `${reader} ${path}`).toContain(
          '<a href="/lab">Lab<span class="needs"> (Professional plan)</span></a>',
        );
      }
    for (const reader of ['visitor', 'professional'] as const)
      expect(await brokenLinks(readers[reader], ['/research', '/lab'])).toEqual([]);
  });

  it('shows the question asked in its box on the research and lab pages, for every reader', async () => {
    for (const reader of ['visitor', 'free', 'personal', 'professional'] as const) {
      const research = await text(reader, '/research?q=oxygen%20evolution%20nickel');
      expect(research, reader).toMatch(
        /<form class="stack" method="get" action="\/research">.*<input id="q" name="q"[^>]* value="oxygen evolution nickel">/,
      );
      const lab = await text(reader, '/lab?q=%28Ni%20OR%20Co%29%20Fe');
      expect(lab, reader).toMatch(
        /<form class="stack" method="get" action="\/lab">.*<input id="q" name="q"[^>]* value="\(Ni OR Co\) Fe"/,
      );
      // Asked from a paper, the box holds the paper.
      expect(await text(reader, '/research?paper=oxygen%20evolution')).toMatch(
        /<input id="q" name="paper"[^>]* value="oxygen evolution">/,
      );
    }
  });

  it('an unusable lab query: the query in its box, the error marked where it is, its fix one click away', async () => {
    const q = 'iron AND cobalt';
    const api = await fetch(
      `${base}/v1/lab/quote?${new URLSearchParams({ q })}`,
      bearer(served.ctx.keys.professional),
    );
    const problem = (await api.json()) as { code: string; position: number; suggested_query: string };
    expect([api.status, problem.code, problem.position, problem.suggested_query]).toEqual([
      400,
      'unusable_query',
      5,
      'iron cobalt',
    ]);
    const r = await readers.professional.get(`/lab?${new URLSearchParams({ q })}`);
    expect(r.status).toBe(400);
    expect(r.headers.get('content-type')).toMatch(/^text\/html/);
    const page = await r.text();
    expect(page).toContain('<code class="query">iron <mark>AND</mark> cobalt</code>');
    expect(page).toContain('At position 5 (marked)');
    expect(page).toContain('<a class="fix" href="/lab?q=iron+cobalt">iron cobalt</a>');
    expect(page).toMatch(/<input id="q" name="q"[^>]* value="iron AND cobalt"/);
    expect(page).toMatch(SEARCH_BOX);
    // The click: the corrected query is quoted.
    const fixed = await text('professional', '/lab?q=iron+cobalt');
    expect(fixed).toMatch(/<input id="q" name="q"[^>]* value="iron cobalt"/);
    expect(fixed).toMatch(/[\d,]+ matching papers?\./);
    // A refusal with no single fix (a choice) still marks the place and keeps the box.
    const year = await readers.professional.get('/lab?q=iron%20year%3A20');
    const yearPage = await year.text();
    expect(year.status).toBe(400);
    expect(yearPage).toContain('<mark>year:20</mark>');
    expect(yearPage).not.toContain('class="fix"');
  });

  it('search offers the elements the words name, beside topics and keywords, to every reader', async () => {
    for (const reader of ['visitor', 'free'] as const) {
      for (const q of ['iron', 'Fe', 'iron oxide']) {
        const page = await text(reader, `/subjects/search?${new URLSearchParams({ q })}`);
        expect(page, `${reader} ${q}`).toMatch(
          /<h2>Elements<\/h2><ul class="found"><li><a href="\/elements\/Fe">Iron \(Fe\)<\/a>/,
        );
      }
      const none = await text(reader, '/subjects/search?q=steelmaking');
      expect(none).not.toContain('<h2>Elements</h2>');
    }
  });

  it("a search's reason names a word in the subject's name only when the name holds that word", async () => {
    // REST and the page say the same reason; 'iron' is inside 'Environmental', not a word of it.
    for (const q of ['iron', 'oxide', 'oxygen evolution', 'cobalt catalysts']) {
      const r = await fetch(
        `${base}/v1/subjects/search?${new URLSearchParams({ q })}`,
        bearer(served.ctx.keys.free),
      );
      const answer = (await r.json()) as { results: { name: string; match: string }[] };
      expect(answer.results.length, q).toBeGreaterThan(0);
      for (const hit of answer.results) {
        const nameWords = hit.name.toLowerCase().split(/[^a-z0-9]+/);
        const has = (w: string) => nameWords.some((n) => n === w || n === `${w}s` || `${n}s` === w);
        const claim = /^name contains ([^;]*)/.exec(hit.match)?.[1];
        if (claim === 'every word')
          expect([q, hit.name, q.split(' ').every(has)]).toEqual([q, hit.name, true]);
        else if (claim)
          // Each word named is in the name as written, or the name's word that holds it is named too.
          for (const m of claim.matchAll(/'([^']+)'(?: \(as '([^']+)'\))?/g))
            expect([q, hit.name, m[0], m[2] ? nameWords.includes(m[2]) : has(m[1]!)]).toEqual([
              q,
              hit.name,
              m[0],
              true,
            ]);
      }
      const page = await text('free', `/subjects/search?${new URLSearchParams({ q })}`);
      for (const hit of answer.results) expect(page).toContain(esc(hit.match));
    }
  });
});

describe('numbers and words, one way on every page', () => {
  it('thousands separated, one counted thing in the singular, on every page kind', async () => {
    const paths = [
      '/',
      '/elements/Fe',
      '/elements/Li',
      `/subjects/topic/${topic}`,
      '/subjects/topic/T10030',
      '/subjects/search?q=oxygen%20evolution',
      '/research?q=oxygen%20evolution%20nickel',
      '/lab?q=Ni%20Fe',
      '/pricing',
    ];
    for (const path of paths)
      for (const reader of ['visitor', 'professional'] as const) {
        const shown = words(await text(reader, path));
        // A number of four digits or more is written with separators (years stand alone, no decimals).
        expect([reader, path, shown.match(/\b\d{4,}\.\d+/g)]).toEqual([reader, path, null]);
        expect([reader, path, shown.match(/\b\d{5,}\b/g)]).toEqual([reader, path, null]);
        expect([
          reader,
          path,
          shown.match(/(?<![\d,.])1 (citations|papers|matching papers|ranked papers)\b/g),
        ]).toEqual([reader, path, null]);
      }
    // Fe's list has papers cited once: said in the singular.
    expect(await text('personal', '/elements/Fe')).toMatch(/· 1 citation<\/span>/);
  });

  it('explains an HRI of 0 and unknown citations where it shows them', async () => {
    const li = (await (await fetch(`${base}/v1/elements/Li`, bearer(served.ctx.keys.personal))).json()) as {
      hri: number;
    };
    expect(li.hri).toBe(0);
    const versions = (await (await fetch(`${base}/v1/versions`)).json()) as {
      versions: { cutoff_date: string }[];
    };
    expect(versions.versions.length).toBeGreaterThan(0);
    const page = await text('personal', '/elements/Li');
    expect(page).toMatch(
      /<th scope="row">HRI \(high-impact research intensity\)<\/th><td>0 <span class="muted">\(none of the [\d,]+ high-impact papers? of the 12 months to \d{4}-\d{2}-\d{2} names Lithium\)<\/span><\/td>/,
    );
    const papers = (await (
      await fetch(`${base}/v1/elements/Li/papers?limit=20`, bearer(served.ctx.keys.personal))
    ).json()) as { papers: { citations: number | null }[] };
    const unknown = papers.papers.filter((p) => p.citations === null).length;
    expect(unknown).toBeGreaterThan(0);
    expect(page.match(/· citations unknown<\/span>/g)?.length).toBe(unknown);
    expect(page).toContain(
      'Citations unknown: the source record (OpenAlex) has no citation count for the paper',
    );
  });
});

describe('the older edition (EDITION=enterprise)', () => {
  it('has no research or lab page (404, as their API), and no page links to one', async () => {
    const older = await servedSample({ EDITION: 'enterprise', SMTP_URL: sink.url });
    try {
      const visitor = new Browser(older.server.base);
      const enterprise = new Browser(older.server.base);
      await signInByMail(enterprise, sink.mails, 'pages.enterprise@example.org');
      await older.ctx.state.setPlan('pages.enterprise@example.org', 'enterprise');
      for (const reader of [visitor, enterprise])
        for (const [page, api] of [
          ['/research?q=iron', '/v1/research?q=iron'],
          ['/research', '/v1/research?q=iron'],
          ['/lab?q=Fe', '/v1/lab/quote?q=Fe'],
          ['/lab', '/v1/lab/quote?q=Fe'],
        ] as const) {
          const [p, a] = [await reader.get(page), await reader.get(api)];
          await Promise.all([p.text(), a.text()]);
          expect([page, p.status, a.status]).toEqual([page, 404, 404]);
        }
      // Every link of the site's pages answers (none leads to research or the lab), and the search
      // box of every page searches subjects.
      const failures: string[] = [];
      for (const reader of [visitor, enterprise]) {
        const links = new Set<string>();
        for (const path of linkedPages()) {
          const r = await reader.get(path);
          const page = await r.text();
          expect([path, r.status]).toEqual([path, 200]);
          expect(page, path).toMatch(SEARCH_BOX);
          for (const m of page.matchAll(/(?:href|action)="(\/[^"]*)"/g))
            links.add(m[1]!.replaceAll('&amp;', '&'));
        }
        expect([...links].filter((l) => /^\/(research|lab)\b/.test(l))).toEqual([]);
        failures.push(...(await brokenLinks(reader, links)));
      }
      expect(failures).toEqual([]);
    } finally {
      await older.close();
    }
  });
});
