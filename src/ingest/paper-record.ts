/**
 * Paper records as a reader expects them, from the OpenAlex record as stored: the title without
 * markup, placeholder venue names as null, and which of several versions of one work is shown.
 * Pure functions: the build applies them to every paper row (src/snapshot-build/paper-rows.ts) and to
 * the corpus (src/scoring/corpus.ts), so every list, lab answer, research lens, page and CSV
 * carries them. The store keeps the record as OpenAlex sent it (the tagger reads that).
 */

/**
 * Bumped whenever a rule here changes what a snapshot holds: the build cache names it, so a build
 * after the change loads the corpus and makes the paper rows in full.
 */
export const PAPER_RECORD_RULES = 1;

// ---------------------------------------------------------------------------------------------
// Titles

/** <sub>/<sup> content that has a Unicode form, character by character. */
const SUBSCRIPT: Record<string, string> = {
  '+': '₊',
  '-': '₋',
  '−': '₋',
  '–': '₋',
  '=': '₌',
  '(': '₍',
  ')': '₎',
};
const SUPERSCRIPT: Record<string, string> = {
  '+': '⁺',
  '-': '⁻',
  '−': '⁻',
  '–': '⁻',
  '=': '⁼',
  '(': '⁽',
  ')': '⁾',
};
const SUPERSCRIPT_DIGITS = '⁰¹²³⁴⁵⁶⁷⁸⁹';
for (let d = 0; d <= 9; d++) {
  SUBSCRIPT[String(d)] = String.fromCharCode(0x2080 + d);
  SUPERSCRIPT[String(d)] = SUPERSCRIPT_DIGITS[d]!;
}

/** HTML entities by name: the ones titles carry (others are left as written). */
const NAMED_ENTITIES: Record<string, string> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: ' ',
  ndash: '–',
  mdash: '—',
  minus: '−',
  hyphen: '‐',
  lsquo: '‘',
  rsquo: '’',
  ldquo: '“',
  rdquo: '”',
  hellip: '…',
  deg: '°',
  times: '×',
  plusmn: '±',
  middot: '·',
  alpha: 'α',
  beta: 'β',
  gamma: 'γ',
  delta: 'δ',
  mu: 'μ',
  pi: 'π',
  sigma: 'σ',
  lambda: 'λ',
  Delta: 'Δ',
};
/** Windows-1252 characters written as the C1 control of the same number (&#x96; for an en dash). */
const CP1252: Record<number, string> = {
  128: '€',
  133: '…',
  145: '‘',
  146: '’',
  147: '“',
  148: '”',
  150: '–',
  151: '—',
};
const ENTITY = /&(?:#(\d{1,7})|#[xX]([0-9a-fA-F]{1,6})|([a-zA-Z][a-zA-Z0-9]{1,8}));/g;

function decodeEntity(whole: string, dec?: string, hex?: string, name?: string): string {
  if (name !== undefined) return NAMED_ENTITIES[name] ?? whole;
  const code = dec !== undefined ? Number.parseInt(dec, 10) : Number.parseInt(hex!, 16);
  if (code >= 0x80 && code <= 0x9f) return CP1252[code] ?? '';
  if (code === 0 || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return '';
  return String.fromCodePoint(code);
}

/**
 * The markup titles carry: HTML inline tags, JATS and MathML (with or without its `mml:` prefix).
 * A `<` before anything else (`x < 5`, `<100 nm`) is text.
 */
const MARKUP_NAMES = new Set(
  (
    'sub sup inf i b u em strong scp sc tt span font small big italic bold br p a div subtitle ' +
    'math mi mn mo ms mtext mrow msub msup msubsup mfrac msqrt mroot mover munder munderover ' +
    'mspace mstyle mfenced mpadded mphantom menclose mtable mtr mtd semantics annotation'
  ).split(' '),
);
const TAG = /<(\/?)([a-zA-Z][\w:.-]*)(?:\s[^<>]*)?\/?>/g;
const SCRIPT = /<(sub|sup|inf)(?:\s[^<>]*)?>([\s\S]*?)<\/\1\s*>/gi;
/** A tag cut off by the end of the title (OpenAlex cuts long titles, markup and all, with `…`). */
const CUT_TAG = /<\/?(?:mml\b|math\b|sub\b|sup\b|i\b|b\b|scp\b|span\b)[^>]*$/i;

const isMarkup = (name: string) => {
  const n = name.toLowerCase();
  const colon = n.indexOf(':');
  return colon >= 0 ? /^(mml|jats|m)$/.test(n.slice(0, colon)) : MARKUP_NAMES.has(n);
};

const stripTags = (s: string) =>
  s.replace(TAG, (whole, _close: string, name: string) => (isMarkup(name) ? '' : whole));

/** A <sub>/<sup> element's text: in Unicode scripts when every character has one, else plain. */
function script(map: Record<string, string>, inner: string): string {
  const text = stripTags(inner).trim();
  if (text === '') return '';
  let out = '';
  for (const c of text) {
    const s = map[c];
    if (s === undefined) return text;
    out += s;
  }
  return out;
}

/** Characters that mean the title needs more than being returned as it is. */
const NEEDS_WORK = /[<&\s]/;
/**
 * Whitespace collapsing changes: two spaces, a space at either end, or whitespace but a space
 * (/\s{2}|[^\S ]|^\s|\s$/ tried its four branches at every character: 0.25 s at 1M titles).
 */
const NOT_A_SPACE = /[^\S ]/;
const oddSpace = (t: string) =>
  t.includes('  ') || t.startsWith(' ') || t.endsWith(' ') || NOT_A_SPACE.test(t);

/**
 * The title as a reader expects it. Kept: the text, with <sub>/<sup> digits and signs (+ − = ( ))
 * as Unicode sub- and superscripts (Fe<sub>3</sub>O<sub>4</sub> -> Fe₃O₄, Cr<sup>3+</sup> ->
 * Cr³⁺); a script holding anything else (a letter, a decimal point) is kept as plain text
 * (Ba<sub>0.5</sub> -> Ba0.5). Dropped: every other tag, its text kept (<i>, <b>, <scp>, <span>,
 * MathML), a tag cut off by the end of the title. HTML entities are decoded (twice escaped ones
 * too: &amp;lt;i&amp;gt;), and whitespace is collapsed to single spaces and trimmed. A title
 * without `<`, `&` or odd whitespace is returned as it is.
 */
export function normaliseTitle(raw: string | null): string | null {
  if (raw === null) return null;
  if (!NEEDS_WORK.test(raw)) return raw;
  let t = raw;
  // Entities first: markup written as &lt;sub&gt; is markup. Twice escaped (&amp;lt;) is decoded twice.
  for (let round = 0; round < 3 && t.includes('&'); round++) {
    const next = t.replace(ENTITY, decodeEntity);
    if (next === t) break;
    t = next;
  }
  if (t.includes('<')) {
    const cut = CUT_TAG.exec(t);
    if (cut) t = t.slice(0, cut.index) + (t.endsWith('…') ? '…' : '');
    t = t.replace(SCRIPT, (_w, kind: string, inner: string) =>
      script(kind.toLowerCase() === 'sup' ? SUPERSCRIPT : SUBSCRIPT, inner),
    );
    // A subtitle element is the subtitle: set off as one.
    t = t.replace(/\s*<subtitle(?:\s[^<>]*)?>\s*/gi, ': ');
    t = stripTags(t);
  }
  if (!oddSpace(t)) return t;
  const collapsed = t.replace(/\s+/g, ' ').trim();
  return collapsed === '' ? null : collapsed;
}

// ---------------------------------------------------------------------------------------------
// Venues

/**
 * Venue names that name no venue: OpenAlex's placeholders for a record whose source is unknown
 * ("No host": 1,723 of the 21,079 sample works) or was withdrawn ("Deleted Journal": 41).
 */
const PLACEHOLDER_VENUES = new Set(['no host', 'deleted journal']);
/** Their lengths: only a name of one of them is lower-cased (lower case keeps these letters' count). */
const PLACEHOLDER_LENGTHS = new Set([...PLACEHOLDER_VENUES].map((v) => v.length));

/** The venue as a reader expects it: null for a placeholder or an empty name. */
export function normaliseVenue(raw: string | null): string | null {
  if (raw === null) return null;
  const name = raw.trim();
  if (name === '') return null;
  if (PLACEHOLDER_LENGTHS.has(name.length) && PLACEHOLDER_VENUES.has(name.toLowerCase())) return null;
  return name;
}

// ---------------------------------------------------------------------------------------------
// Versions of one work

/**
 * The key that finds versions of one work: the title's letters and digits, lower case, without
 * tags and entities. The SQL of versionKeySql is the same rule, for the whole corpus at once.
 */
export function versionKey(title: string): string {
  let t = title;
  if (t.includes('<')) t = t.replace(/<[^>]*>/g, '');
  if (t.includes('&')) t = t.replace(/&[#a-zA-Z0-9]+;/g, '');
  return t.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, '');
}

/** versionKey in DuckDB SQL, over the text column `column`. */
export const versionKeySql = (column: string) =>
  `regexp_replace(lower(CASE WHEN contains(${column}, '<') OR contains(${column}, '&') ` +
  `THEN regexp_replace(regexp_replace(${column}, '<[^>]*>', '', 'g'), '&[#a-zA-Z0-9]+;', '', 'g') ` +
  `ELSE ${column} END), '[^\\p{L}\\p{N}]+', '', 'g')`;

/**
 * The rows of the store's title_keys table (id, updated_date, k) for the works of `source` (a FROM
 * item with id, updated_date and title, alias s): k is the hash of the title's versionKey, NULL
 * when the key is too short to find versions by.
 */
export const titleKeysSql = (source: string) =>
  `SELECT id, updated_date, CASE WHEN length(key) >= ${VERSION_KEY_MIN_LENGTH} THEN hash(key) END AS k
   FROM (SELECT s.id, s.updated_date, ${versionKeySql('s.title')} AS key FROM ${source})`;

/**
 * Titles shorter than this (in letters and digits) are too generic to say two records are one
 * work ("Reply on RC1", "Issue Editorial Masthead", "Occurrence Download").
 */
const VERSION_KEY_MIN_LENGTH = 30;

/** Publication years further apart than this are different works, whatever the title. */
const VERSION_YEARS_APART = 2;

/** What the rule reads of a work. */
export interface WorkVersion {
  id: number;
  title: string;
  doi: string | null;
  venue: string | null;
  type: string | null;
  year: number | null;
  citations: number | null;
}

/** DOI prefixes of preprint servers (DOIs as stored: lower case, without the resolver). */
const PREPRINT_DOI = [
  '10.2139/ssrn.', // SSRN
  '10.26434/chemrxiv', // ChemRxiv
  '10.21203/rs.', // Research Square
  '10.20944/preprints', // Preprints.org
  '10.48550/arxiv.', // arXiv
  '10.31223/', // EarthArXiv
  '10.22541/', // Authorea, ESS Open Archive
  '10.1002/essoar.', // ESS Open Archive (earlier)
  '10.31219/osf.io', // OSF Preprints
  '10.36227/techrxiv', // TechRxiv
  '10.5194/egusphere-', // EGUsphere (Copernicus preprints)
];
/** bioRxiv and medRxiv: 10.1101 followed by a date (10.1101 alone is also Cold Spring Harbor's journals). */
const BIORXIV_DOI = /^10\.1101\/\d{4}\.\d{2}\.\d{2}\./;
/** Copernicus discussion papers: <journal>-<year>-<number> (the final paper: <journal>-<volume>-<page>-<year>). */
const DISCUSSION_DOI = /^10\.5194\/[a-z]+-\d{4}-\d+$/;
const PREPRINT_VENUE =
  /arxiv|rxiv\b|research square|ssrn|social science research network|preprints\.org|authorea|open archive|egusphere/i;

/**
 * isPreprint in DuckDB SQL over the columns doi, venue and type (the same lists and patterns), to
 * pick out in SQL the few groups the rule can hide a version of.
 */
export const isPreprintSql = (doi: string, venue: string, type: string) =>
  `(${type} = 'preprint' OR ${PREPRINT_DOI.map((p) => `starts_with(${doi}, '${p}')`).join(' OR ')} ` +
  `OR regexp_matches(${doi}, '${BIORXIV_DOI.source}') OR regexp_matches(${doi}, '${DISCUSSION_DOI.source}') ` +
  `OR regexp_matches(${venue}, '(?i)${PREPRINT_VENUE.source}'))`;

/** editionKey in DuckDB SQL, over the text column `doi`. */
export const editionKeySql = (doi: string) =>
  `CASE WHEN regexp_matches(${doi}, '^10\\.\\d+/[a-z]+\\..') THEN regexp_replace(${doi}, '^(10\\.\\d+/)[a-z]+\\.', '\\1*.') END`;

/** True when the record is a preprint: by its type, its DOI's server, or its venue. */
export function isPreprint(w: Pick<WorkVersion, 'doi' | 'venue' | 'type'>): boolean {
  if (w.type === 'preprint') return true;
  const doi = w.doi;
  if (
    doi &&
    (PREPRINT_DOI.some((p) => doi.startsWith(p)) || BIORXIV_DOI.test(doi) || DISCUSSION_DOI.test(doi))
  )
    return true;
  return w.venue !== null && PREPRINT_VENUE.test(w.venue);
}

/**
 * Two language editions of one journal article carry one DOI but for the journal's code
 * (Angewandte Chemie: 10.1002/ange.202405650 in German, 10.1002/anie.202405650 International):
 * the DOI with the code left out, or null.
 */
export function editionKey(doi: string | null): string | null {
  const m = doi ? /^(10\.\d+\/)[a-z]+\.(.+)$/.exec(doi) : null;
  return m ? `${m[1]}*.${m[2]}` : null;
}

/** The version shown of several: the most cited, then the lowest work id. */
const shownFirst = (a: WorkVersion, b: WorkVersion) =>
  (b.citations ?? -1) - (a.citations ?? -1) || a.id - b.id;

const yearsClose = (a: WorkVersion, b: WorkVersion) =>
  !a.year || !b.year || Math.abs(a.year - b.year) <= VERSION_YEARS_APART;

/**
 * The works of `works` that are another version of a work shown, by work id, ascending. Versions
 * share a title (versionKey, at least VERSION_KEY_MIN_LENGTH long) and were published at most
 * two years apart, and are:
 * - a preprint and a journal article (not a preprint): the article is shown, every such preprint
 *   hidden;
 * - preprints alone (versions or postings of one preprint): one is shown;
 * - two editions of one article (editionKey): one is shown.
 * The one shown of several is the most cited, then the lowest id. Any order of `works` gives the
 * same answer. Journal articles that share a title otherwise (a meeting abstract and its paper,
 * two issues' "Editorial") are all shown.
 */
export function hiddenVersions(works: readonly WorkVersion[]): number[] {
  const byKey = new Map<string, WorkVersion[]>();
  for (const w of works) {
    const key = versionKey(w.title);
    if ([...key].length < VERSION_KEY_MIN_LENGTH) continue;
    const group = byKey.get(key);
    if (group) group.push(w);
    else byKey.set(key, [w]);
  }
  const hidden = new Set<number>();
  for (const group of byKey.values()) {
    if (group.length < 2) continue;
    group.sort(shownFirst);
    const articles = group.filter((w) => !isPreprint(w));
    const preprints = group.filter((w) => isPreprint(w));
    for (const p of preprints) if (articles.some((a) => yearsClose(a, p))) hidden.add(p.id);
    // Preprints without an article: the first of them (in shown order) stands for those close to it.
    const alone = preprints.filter((p) => !hidden.has(p.id));
    for (let i = 0; i < alone.length; i++) {
      if (hidden.has(alone[i]!.id)) continue;
      for (let j = i + 1; j < alone.length; j++)
        if (yearsClose(alone[i]!, alone[j]!)) hidden.add(alone[j]!.id);
    }
    const editions = new Map<string, WorkVersion>();
    for (const a of articles) {
      const key = editionKey(a.doi);
      if (key === null) continue;
      const first = editions.get(key);
      if (first === undefined) editions.set(key, a);
      else if (yearsClose(first, a)) hidden.add(a.id);
    }
  }
  return [...hidden].sort((a, b) => a - b);
}
