/**
 * The lab: a filter query -> a binding quote (how many papers match, their spread over years and
 * communities, a price per deliverable), then a run that delivers the quote's top papers ranked
 * by impact. The quote is signed, so a run refuses an edited, expired or stale quote before any
 * payment is asked (docs/lab.md).
 */
import {
  LAB_DEPTHS,
  LAB_LICENCE_ABOVE,
  LAB_QUOTE_USD,
  LAB_SAMPLE_ABOVE,
  type LabDepth,
} from '../access/policy.js';
import type { Usd } from '../contracts/common.js';
import type { LabQuote, LabRunAnswer } from '../contracts/lab.js';
import { type LabIndex, labIndex } from '../lab/lab-index.js';
import { isPositive, matchClauses } from '../lab/match.js';
import type { LabQuery } from '../lab/query-ast.js';
import { applyFix, LabQueryError, parseLabQuery, printLabQuery } from '../lab/query-parser.js';
import { quoteId, signQuote, verifyQuote } from '../lab/quote-signature.js';
import { explainUnknown, type ResolvedClause, resolvedTerms, resolveQuery } from '../lab/resolve.js';
import { countBy, evenSample, lowestK, type Postings } from '../lab/sets.js';
import type { LabQueries, PaperQueries, SnapshotStamp, SnapshotView } from '../snapshot/reader.js';
import { ServiceError } from './errors.js';
import { requireExactlyOne } from './exactly-one.js';
import { PAPER_NOTES } from './notes.js';
import { paperEntries } from './papers.js';
import { envelope, type Viewer } from './viewer.js';

/** What quoting needs besides the snapshot: the signing secret, the quote lifetime, the clock. */
export interface QuoteSettings {
  secret: string;
  ttlSeconds: number;
  now: () => Date;
}

/** The answers' types, inferred from their contracts (src/contracts/lab.ts): they cannot drift. */
export type { LabQuote, LabRunAnswer } from '../contracts/lab.js';

const usd = (v: number): Usd => ({ usd: Math.round(v * 1e6) / 1e6, currency: 'USD' });
/** Communities listed in a quote, at most. */
const MAX_COMMUNITIES = 20;
/** Broader queries are offered when the match count is below this. */
const NARROW_BELOW = 20;
const MAX_BROADER = 5;

export const LAB_NOTES =
  'A lab match is a paper mapped to every required term through its headline elements, topics and keywords ' +
  '(not its full text), so a narrow AND may give 0: see broader. matches counts every matching paper; above ' +
  `${LAB_SAMPLE_ABOVE} matches, years and communities are counted on a fixed sample of ${LAB_SAMPLE_ABOVE} ` +
  `matches spread evenly over publication dates (sample.used), so their papers are estimates. Above ` +
  `${LAB_LICENCE_ABOVE} matches the packet is offered as a licence, not a price.`;

/** The filter of a POST body: the query itself, or the one ```query block of a markdown text. */
function queryFromMarkdown(markdown: string): string {
  const blocks = [...markdown.matchAll(/```[ \t]*query[ \t]*\r?\n([\s\S]*?)\r?\n?```/gi)];
  const m = blocks[0];
  // A second block is refused, never dropped silently: which one is the filter is not ours to guess.
  if (blocks.length > 1) {
    throw new ServiceError(
      'invalid_parameter',
      `Parameter 'markdown': it holds ${blocks.length} \`\`\`query blocks; a quote prices one filter, so put it in one block (join alternatives with OR, as (Ni OR Co)), or ask for one quote per block.`,
      { parameter: 'markdown', blocks: blocks.length, position: blocks[1]!.index },
    );
  }
  if (!m) {
    throw new ServiceError(
      'unusable_query',
      'The markdown has no ```query fenced block holding the filter.',
      {
        position: 0,
        suggestion: 'put the filter in a block: ```query\\nperovskite -Pb year:2020..\\n```',
      },
    );
  }
  return m[1]!.trim();
}

/** The filter asked for with the lab quote's parameters (contracts/lab.ts): the query, or the ```query block of the markdown. */
export function labQuoteInput(
  f: { query?: string | undefined; markdown?: string | undefined },
  where = '',
): string {
  requireExactlyOne({ query: f.query, markdown: f.markdown }, `'query' or 'markdown'${where}`);
  return f.query ?? queryFromMarkdown(f.markdown!);
}

function parse(input: string): LabQuery {
  try {
    return parseLabQuery(input);
  } catch (e) {
    if (e instanceof LabQueryError) {
      throw new ServiceError('unusable_query', `Unusable lab query: ${e.message}.`, {
        reason: e.code,
        position: e.position,
        ...(e.token !== undefined ? { token: e.token } : {}),
        suggestion: e.suggestion,
        // The query with the suggestion applied, where it is one definite edit: one click away.
        ...(e.fix ? { suggested_query: applyFix(input, e.fix) } : {}),
        query: input,
      });
    }
    throw e;
  }
}

const ROLE = { require: 'required', exclude: 'excluded', any: 'any_of' } as const;

function describeTerms(clauses: ResolvedClause[]): LabQuote['terms'] {
  return clauses.flatMap((c) => {
    if (c.kind === 'year') return [];
    const terms = c.kind === 'any' ? c.terms : [c.term];
    return terms.map((t) => ({
      term: t.term,
      role: ROLE[c.kind],
      subjects: t.subjects.map((s) => ({
        subject_type: s.type,
        subject_id: s.id,
        name: s.name,
        papers: s.paperCount,
      })),
      ...(t.expansion ? { expansion: t.expansion } : {}),
    }));
  });
}

/** Clauses dropped at most, looking for broader queries (one, then two, then three). */
const MAX_DROPPED = 3;
/**
 * Subsets matched at most per quote: every subset of a query of up to 8 clauses (8 + 28 + 56);
 * a longer query is cut there, so a narrow quote stays cheap (500 took 124 ms on the sample).
 */
const MAX_BROADER_TRIED = 100;

/** Every way to choose k of n indexes, in lexicographic order. */
function* choose(n: number, k: number, from = 0): Generator<number[]> {
  if (k === 0) {
    yield [];
    return;
  }
  for (let i = from; i <= n - k; i++) for (const rest of choose(n, k - 1, i + 1)) yield [i, ...rest];
}

/**
 * The nearest broader queries that match more: one clause dropped; if none of those does, two;
 * then three. Within a step, most matches first. Each keeps a usable positive clause.
 */
function broaderQueries(index: LabIndex, clauses: ResolvedClause[], matches: number) {
  let tried = 0;
  for (let dropped = 1; dropped <= Math.min(MAX_DROPPED, clauses.length - 1); dropped++) {
    const out: { query: string; matches: number }[] = [];
    for (const drop of choose(clauses.length, dropped)) {
      if (++tried > MAX_BROADER_TRIED) break;
      const rest = clauses.filter((_, j) => !drop.includes(j));
      if (!rest.some(isPositive)) continue;
      const n = matchClauses(index, rest).length;
      if (n > matches) out.push({ query: printLabQuery({ clauses: rest.map((c) => c.clause) }), matches: n });
    }
    if (out.length > 0) {
      return out
        .sort((a, b) => b.matches - a.matches || a.query.localeCompare(b.query))
        .slice(0, MAX_BROADER);
    }
  }
  return [];
}

function spreads(index: LabIndex, matched: Postings) {
  const sampled = matched.length > LAB_SAMPLE_ABOVE;
  const basis = sampled ? evenSample(matched, LAB_SAMPLE_ABOVE) : matched;
  // From a sample, counts are scaled to the whole match (estimates, flagged by sample.used).
  const scale = (n: number) => (sampled ? Math.round((n * matched.length) / basis.length) : n);
  const years = [...countBy(basis, index.year)]
    .sort((a, b) => (a[0] || 1e9) - (b[0] || 1e9))
    .map(([year, n]) => ({ year: year === 0 ? null : year, papers: scale(n) }));
  const communities = [...countBy(basis, index.cluster)]
    .sort((a, b) => b[1] - a[1] || a[0] - b[0])
    .slice(0, MAX_COMMUNITIES)
    .map(([t, n]) => ({
      topic_id: t === -1 ? null : `T${t}`,
      name: t === -1 ? null : index.topicName(t),
      papers: scale(n),
    }));
  return { years, communities, sample: { used: sampled, size: basis.length } };
}

interface Evaluated {
  query: string;
  clauses: ResolvedClause[];
  matched: Postings;
  index: LabIndex;
}

/** What the lab reads of a snapshot: its index, and the papers a run delivers. */
type LabView = SnapshotView<LabQueries & PaperQueries>;

/** Parses, resolves and matches a query; a query with no known positive term is unusable. */
function evaluate(snapshot: SnapshotView<LabQueries>, input: string): Evaluated {
  const parsed = parse(input);
  const index = labIndex(snapshot);
  const clauses = resolveQuery(index, parsed);
  if (!clauses.some(isPositive)) {
    const unknown = resolvedTerms(clauses).filter((t) => t.subjects.length === 0);
    throw new ServiceError(
      'unusable_query',
      `No required term of '${printLabQuery(parsed)}' is an element, topic or keyword this data knows.`,
      {
        reason: 'no_known_term',
        position: unknown[0]?.position ?? 0,
        suggestion: 'name an element (Fe, iron), a topic ("oxygen evolution reaction") or a keyword',
        ignored: unknown.map((t) => ({ term: t.term, position: t.position, ...explainUnknown(index, t) })),
      },
    );
  }
  return { query: printLabQuery(parsed), clauses, matched: matchClauses(index, clauses), index };
}

/**
 * What a quote says of a query on a snapshot, whoever asks and whenever: its matches, spread,
 * deliverables and broader queries. Kept per snapshot for the queries asked last (QUOTE_BASES),
 * since clients ask the same quote again (a quote expires; an agent retries) and the broader
 * queries alone can be a hundred matches of the postings.
 */
type QuoteBasis = Omit<
  LabQuote,
  'quote_id' | 'signature' | 'issued_at' | 'expires_at' | 'licence' | keyof Envelope
> & {
  licensed: boolean;
  noBroader: string | undefined;
};
type Envelope = ReturnType<typeof envelope>;

/** Quote bases kept per snapshot (a few KB each), the oldest dropped first. */
const QUOTE_BASES = 512;

function quoteBasis(snapshot: SnapshotView<LabQueries>, input: string): QuoteBasis {
  const kept = snapshot.memoize('lab-quote-bases', () => new Map<string, QuoteBasis>());
  const known = kept.get(input);
  if (known) {
    // Most recently asked last.
    kept.delete(input);
    kept.set(input, known);
    return known;
  }
  // Frozen: every quote of the query shares it, so no answer may change it.
  const basis = deepFreeze(computeQuoteBasis(snapshot, input));
  if (kept.size >= QUOTE_BASES) kept.delete(kept.keys().next().value!);
  kept.set(input, basis);
  return basis;
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

/**
 * The depths a quote of `matches` papers offers, cheapest first, and those it does not, each with
 * the papers it would deliver. A dearer depth is offered only when it delivers more papers than
 * the cheaper one offered before it: with 9 matches papers_100 would sell papers_20's 9 papers
 * again at four times the price. Nothing is offered when nothing matches or above the licence line.
 */
export function depthOffers(matches: number): {
  offered: { depth: LabDepth; papers: number }[];
  notOffered: LabQuote['not_offered'];
} {
  const offered: { depth: LabDepth; papers: number }[] = [];
  const notOffered: LabQuote['not_offered'] = [];
  // Cheapest first, so "the cheaper one" is the last offered.
  const depths = (Object.keys(LAB_DEPTHS) as LabDepth[]).sort(
    (a, b) => LAB_DEPTHS[a].usd - LAB_DEPTHS[b].usd,
  );
  for (const depth of depths) {
    const papers = Math.min(LAB_DEPTHS[depth].papers, matches);
    const cheaper = offered.at(-1);
    if (matches === 0) notOffered.push({ depth, papers, reason: 'nothing matches: see broader' });
    else if (matches > LAB_LICENCE_ABOVE)
      notOffered.push({ depth, papers, reason: `above ${LAB_LICENCE_ABOVE} matches: see licence` });
    else if (cheaper && papers <= cheaper.papers)
      notOffered.push({
        depth,
        papers,
        reason: `delivers the same ${papers} papers as ${cheaper.depth}: only ${matches} match`,
      });
    else offered.push({ depth, papers });
  }
  return { offered, notOffered };
}

function computeQuoteBasis(snapshot: SnapshotView<LabQueries>, input: string): QuoteBasis {
  const { query, clauses, matched, index } = evaluate(snapshot, input);
  const matches = matched.length;
  const licensed = matches > LAB_LICENCE_ABOVE;
  const { offered, notOffered } = depthOffers(matches);
  const deliverables: LabQuote['deliverables'] = {};
  for (const { depth, papers } of offered) {
    const price = LAB_DEPTHS[depth].usd;
    deliverables[depth] = { papers, price: usd(price), run_price: usd(price - LAB_QUOTE_USD) };
  }
  const year = clauses.find((c) => c.kind === 'year');
  const broader = matches < NARROW_BELOW ? broaderQueries(index, clauses, matches) : [];
  const noBroader =
    matches < NARROW_BELOW && broader.length === 0
      ? `broader is empty: no query made by dropping up to ${MAX_DROPPED} of this query's clauses (keeping a known ` +
        `required term; the first ${MAX_BROADER_TRIED} such queries are tried) matches more papers. Try other terms, an OR group or a wider year range.`
      : undefined;
  return {
    query,
    terms: describeTerms(clauses),
    year: year?.kind === 'year' ? { from: year.from, to: year.to } : null,
    matches,
    ...spreads(index, matched),
    deliverables,
    not_offered: notOffered,
    ignored: resolvedTerms(clauses)
      .filter((t) => t.subjects.length === 0)
      .map((t) => ({ term: t.term, position: t.position, ...explainUnknown(index, t) })),
    broader,
    price: usd(LAB_QUOTE_USD),
    licensed,
    noBroader,
  };
}

export function labQuote(
  snapshot: SnapshotView<LabQueries>,
  input: string,
  viewer: Viewer,
  settings: QuoteSettings,
): LabQuote {
  const { licensed, noBroader, ...basis } = quoteBasis(snapshot, input);
  const issued = settings.now();
  const unsigned: Omit<LabQuote, 'signature'> = {
    quote_id: quoteId(basis.query, snapshot.version, settings.secret),
    query: basis.query,
    terms: basis.terms,
    year: basis.year,
    matches: basis.matches,
    years: basis.years,
    communities: basis.communities,
    sample: basis.sample,
    deliverables: basis.deliverables,
    not_offered: basis.not_offered,
    licence: licensed
      ? {
          detail: `${basis.matches} papers match: above ${LAB_LICENCE_ABOVE} the packet is a data licence, not a per-call price. Narrow the query, or ask for a licence.`,
          contact_url: `${viewer.publicUrl}/pricing#licence`,
        }
      : null,
    ignored: basis.ignored,
    broader: basis.broader,
    price: basis.price,
    issued_at: issued.toISOString(),
    expires_at: new Date(issued.getTime() + settings.ttlSeconds * 1000).toISOString(),
    ...envelope(snapshot, viewer, `/lab?${new URLSearchParams({ q: basis.query })}`, { lab: LAB_NOTES }, [
      [basis.years, () => 'years and communities are empty: no paper matches this query (see broader).'],
      // broader is offered for a narrow query only (the spec): empty otherwise, as expected.
      ...(noBroader ? [[basis.broader, () => noBroader] as const] : []),
    ]),
  };
  return {
    ...unsigned,
    signature: signQuote(unsigned as unknown as Record<string, unknown>, settings.secret),
  };
}

/**
 * The refusals of a run, before any payment is asked: edited (signature mismatch, 400), expired
 * (410), stale (the data was republished since, 409), a licence offer (403), a depth not offered
 * (400 depth_not_offered). `paidBefore`: a retry of a run this very payment already bought, whose
 * quote was unexpired when it was paid; it is owed the run even if the quote has expired since.
 */
export function checkQuote(
  snapshot: SnapshotStamp,
  quote: Record<string, unknown>,
  depth: LabDepth,
  settings: QuoteSettings,
  paidBefore = false,
): LabQuote {
  if (!verifyQuote(quote, settings.secret)) {
    throw new ServiceError(
      'quote_edited',
      'The quote does not match its signature: it was changed after it was issued. Send it exactly as returned, or ask for a new quote.',
    );
  }
  const q = quote as unknown as LabQuote;
  if (!paidBefore && Date.parse(q.expires_at) <= settings.now().getTime()) {
    throw new ServiceError('quote_expired', `The quote expired at ${q.expires_at}; ask for a new quote.`, {
      expired_at: q.expires_at,
    });
  }
  if (q.data_version !== snapshot.version) {
    throw new ServiceError(
      'quote_stale',
      'The data was republished since the quote was issued; its numbers and prices no longer hold. Ask for a new quote.',
      { quote_data_version: q.data_version, data_version: snapshot.version },
    );
  }
  if (q.licence) {
    throw new ServiceError('licence_required', q.licence.detail, { contact_url: q.licence.contact_url });
  }
  // Offered by the quote and by the rule (depthOffers): a quote issued before the rule, still
  // signed and unexpired, must not sell a dearer depth that delivers nothing more either.
  const { offered, notOffered } = depthOffers(q.matches);
  if (!q.deliverables[depth] || !offered.some((o) => o.depth === depth)) {
    const why = notOffered.find((n) => n.depth === depth)?.reason;
    const names = offered.map((o) => o.depth).filter((d) => q.deliverables[d]);
    throw new ServiceError(
      'depth_not_offered',
      q.matches === 0
        ? 'Nothing matches this quote, so it offers no deliverable; see its broader queries.'
        : `The quote does not offer '${depth}'${why ? `: it ${why}` : ''}. Run ${names.join(' or ')} instead.`,
      { parameter: 'depth', offered: names },
    );
  }
  return q;
}

/** A checked quote's top papers, ranked by impact (rank 1 first). */
export function labRun(snapshot: LabView, quote: LabQuote, depth: LabDepth, viewer: Viewer): LabRunAnswer {
  const { matched, index } = evaluate(snapshot, quote.query);
  const top = lowestK(matched, index.rankPosition, LAB_DEPTHS[depth].papers);
  // ris_contribution: the paper's recency weight as a share of the whole match's (sums to 1 over all matches).
  let total = 0;
  for (let i = 0; i < matched.length; i++) total += index.recency[matched[i]!]!;
  const ranked = top.map((ordinal, i) => ({
    ordinal,
    rank: i + 1,
    risContribution: total > 0 ? index.recency[ordinal]! / total : 0,
  }));
  return {
    quote_id: quote.quote_id,
    query: quote.query,
    depth,
    matches: matched.length,
    price: quote.deliverables[depth]!.run_price,
    papers: paperEntries(snapshot, ranked),
    ...envelope(snapshot, viewer, `/lab?${new URLSearchParams({ q: quote.query })}`, {
      papers: PAPER_NOTES,
      lab: LAB_NOTES,
    }),
  };
}
