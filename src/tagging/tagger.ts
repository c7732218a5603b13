/**
 * Headline-element tagger (docs/metrics.md, "Mapping papers to subjects"): the elements a paper title
 * names as a subject, as a chemist reads it. Precision matters more than recall, so every rule
 * below errs on the side of not tagging.
 *
 * Two passes over the (normalized) title:
 * 1. Words (lowercase letter runs, case-insensitive): the word rules in words.ts.
 * 2. Tokens (whitespace-separated, symbol case matters), skipped entirely in an all-caps title:
 *    - a token or each part of a -,/,@,: compound must parse completely as a formula (the
 *      formula reader in formula.ts);
 *    - an all-capital token made only of one-letter symbols and no digits (COF, PVC, SOFC, NW, IV,
 *      UV, BC, CN ...) is an abbreviation unless whitelisted (CO, NO, OH, HF, BN, KOH, HCN ...):
 *      BN counts as boron nitride;
 *    - a one-letter symbol alone counts only with a whitelisted count (H2, O2, N2, C60 ...), a
 *      charge (K+, H+), an oxidation state (U(VI)), an isotope mass of >= 2 digits (13C), a
 *      "-doped"/"-ion"-like suffix (N-doped, K-ion), or next to another symbol part in the same
 *      compound (Pt/C, Co-N-C, Li-S, U-Pb); never a bare capital ("vitamin C", "S-scheme", "A-site");
 *    - a bare two-letter symbol (Fe, Ni, Co) counts, except English/scientific words (In, As, At,
 *      Be, He, No, Am, Pa, Po, Mt, Pm, Tm) unless in a formula, ion or "-doped"-like compound;
 *      "Ga" after a number is giga-annum; "Co-"/"Bi-"/"Re-" prefixes (co-doping, bi-functional,
 *      re-evaluation) need a chemical partner ("Co-based", "Co-N-C"; "Co-doped" only lowercase and
 *      not after a list of dopants); "Ca." abbreviations; proper names ("La Niña", "Al Hajar") are
 *      skipped when the next word is capitalized in a sentence-case title; some capitalized first
 *      words (La, Se, Ce, Au, Na, ...) and titles in another language (French, Spanish, German,
 *      Portuguese, Italian stop words) give no bare two-letter symbols;
 *    - symbols heavier than Pu (Z > 94) never come from formulas (CDs, Es, Md, Ts are abbreviations).
 * v3: Unicode dashes and bonds are folded first (box-drawing "Fe─N─C", "≡", zero-width spaces,
 *    Roman numeral characters "Cr(Ⅵ)", subscript x); a bond between a metal and a symbol reads like
 *    a dash ("Ni=O", "Fe(IV)=O"; "C=O" stays an organic bond); N/O/S with a coordination count beside
 *    a metal is the element ("Fe-N4"); "Co2" in a title-case title and "scCO2" are CO2; a one-letter
 *    symbol listed with one the title names elsewhere ("N and O" beside "oxygen") or before a dating
 *    word ("U Pb dating") is the element; in a title-case title, two to four common metal symbols run
 *    together and lowercased ("Nife-Ldh", "Conip@Ni2p", "Nimo Alloys", "Nifeox") are a formula when
 *    joined to another part, followed by a material word, or ending in "ox".
 * v5: more publishers' dashes and bonds (hyphen bullet, dashed box lines, the midline ellipsis of
 *    "Pt⋯O", the soft hyphen) and compatibility forms read as plain letters (fullwidth "Ｆｅ３Ｏ４",
 *    ligatures "ﬂuorinated", MathML bold letters); a formula glued to the next word
 *    ("MnCe3.67C6Permeable", "CO2to", CO2-equivalent "CO2e") or after a short word ("ofNi3S2",
 *    "eCO2RR"); the Pi (phosphate) water-oxidation catalysts "CoPi", "Co-Pi", "NiPi"; a parenthesis
 *    opened in the token before and closed before a count ("(Co, Cr)3O4"); brackets kept around a
 *    formula with a charge ("[(PW9O34)2Co4(H2O)2]10-"); MXene/MBene run onto a formula. Adsorbed
 *    intermediates ("*OH", "OOH*") stay unread.
 */
import { ELEMENTS } from '../elements/elements.js';
import { FORMULA_SYMBOLS, type Parsed, parseFormula, parseWrongCase } from './formula.js';
import { namesElement, tagWords } from './words.js';

/** Bump when the rules change: stored tags carry the version that made them. */
export const TAGGER_VERSION = 5;

const Z = new Map<string, number>(ELEMENTS.map((e) => [e.symbol, e.number]));

// ---------------------------------------------------------------- token rules

/** Two-letter symbols that are also common words or units: never tagged when bare. */
const BARE_STOP = new Set([
  'In',
  'As',
  'At',
  'Be',
  'He',
  'No',
  'Am',
  'Pa',
  'Po',
  'Mt',
  'Pm',
  'Tm',
  'Cf',
  'Es',
]);
/** Bare two-letter symbols that are also capitalized words when they open a title. */
const FIRST_WORD_STOP = new Set([
  'La',
  'Se',
  'Ce',
  'Au',
  'Ne',
  'Na',
  'Al',
  'Os',
  'Er',
  'Ho',
  'Co',
  'Bi',
  'Re',
]);
/** Prefix-like symbols ("Co-doping", "Bi-functional", "Re-evaluation") that need a chemical partner. */
const PREFIX_LIKE = new Set(['Co', 'Bi', 'Re']);
/** Hyphen partners that make a bare or prefix-like symbol chemical: "In-doped", "Co-based", "K-ion". */
const CHEM_PARTNER = new Set(
  (
    'doped codoped doping codoping based free rich poor deficient containing substituted modified loaded ' +
    'decorated alloy alloys alloyed incorporated coordinated bearing supported catalyzed catalysed ' +
    'mediated promoted porphyrin porphyrins phthalocyanine phthalocyanines ion ions atom atoms site sites ' +
    'single nanoparticles nanoparticle nanoclusters cluster clusters complex complexes salen terminated ' +
    'vacancy vacancies feldspar isotope isotopes metal air sulfur'
  ).split(' '),
);
/** Partners that also hold for one-letter symbols (N-doped, K-ion, H-terminated, O-vacancy). */
const SINGLE_PARTNER = new Set(
  'doped codoped doping codoping rich deficient containing ion ions terminated vacancy vacancies feldspar anchored coordinated'.split(
    ' ',
  ),
);

/** All-capital, one-letter-symbol tokens without digits that are real formulas. */
const CAPS_FORMULA_OK = new Set([
  'CO',
  'NO',
  'OH',
  'HF',
  'BN',
  'KF',
  'KI',
  'HI',
  'CH',
  'NH',
  'KOH',
  'OOH',
  'HCN',
  'SCN',
  'OCN',
  'SOx',
]);
/** One-letter symbol with a count that names the element (H2, O2, C60); S1/T1/B12 do not. */
const SINGLE_COUNT_OK = new Set([
  'H2',
  'O2',
  'O3',
  'N2',
  'F2',
  'I2',
  'I3',
  'C60',
  'C70',
  'S8',
  'P4',
  'H+',
  'K+',
  'F-',
  'O2-',
  'S2-',
  'N3-',
  'P3-',
]);

/** Unicode forms folded before tokenizing: dashes to '-', sub/superscript digits, charges. */
const FOLD: Record<string, string> = {
  '\u2010': '-',
  '\u2011': '-',
  '\u2012': '-',
  '\u2013': '-',
  '\u2014': '-',
  '\u2212': '-',
  '\u207a': '+',
  '\u207b': '-',
  '\u208a': '+',
  '\u208b': '-',
  '\u00b2': '2',
  '\u00b3': '3',
  '\u00b9': '1',
  '\u2022': '\u00b7',
  '\u00a0': ' ',
  '\u2550': '=', // "(M═Ni, Co)": a box-drawing double line for an equals sign
  // publishers' bonds and dashes: "Fe─N─C", "Mn─O", "Gas Separation─toward" (box-drawing lines)
  '\u2500': '-',
  '\u2501': '-',
  '\u2015': '-',
  '\ufe63': '-',
  '\uff0d': '-',
  '\u2261': '=', // "N≡N": a triple bond reads like a double one
  '\u22c5': '\u00b7', // "CuSO4⋅5H2O": hydrate dots
  '\u2219': '\u00b7',
  '\u2093': 'x', // "LiNiₓ": subscript x
  // v5: more publishers' dashes and bonds: hyphen bullet, small em dash, two- and three-em dashes,
  // horizontal line extension, modifier minus, heavy minus, dashed box-drawing lines ("Fe┄N"), the
  // midline ellipsis of a weak bond ("Pt⋯O"); double hyphens and short equals signs for "="
  '\u2043': '-',
  '\ufe58': '-',
  '\u2e3a': '-',
  '\u2e3b': '-',
  '\u23af': '-',
  '\u02d7': '-',
  '\u2796': '-',
  '\u2504': '-',
  '\u2505': '-',
  '\u2508': '-',
  '\u2509': '-',
  '\u254c': '-',
  '\u254d': '-',
  '\u2574': '-',
  '\u2576': '-',
  '\u2578': '-',
  '\u257a': '-',
  '\u22ef': '-',
  '\u2e40': '=',
  '\ua78a': '=',
  '\u2263': '=',
  // long arrows read as the arrow of a substitution ("Ca2+⟶Sr2+")
  '\u27f6': '\u2192',
  '\u2794': '\u2192',
  // zero-width characters and the soft hyphen inside formulas ("Co\u200b3O4", "Fe\u00adN")
  '\u00ad': '',
  '\u200b': '',
  '\u200c': '',
  '\u200d': '',
  '\u2060': '',
  '\ufeff': '',
};
for (let d = 0; d <= 9; d++) {
  FOLD[String.fromCharCode(0x2080 + d)] = String(d);
  if (d !== 1 && d !== 2 && d !== 3) FOLD[String.fromCharCode(0x2070 + d)] = String(d);
}
// Roman numeral characters in oxidation states: "CuⅠ", "copper(Ⅱ)"
for (const [i, r] of ['I', 'II', 'III', 'IV', 'V', 'VI', 'VII', 'VIII'].entries()) {
  FOLD[String.fromCharCode(0x2160 + i)] = r;
}
const FOLD_RE = new RegExp(`[${Object.keys(FOLD).join('')}]`, 'g');
/**
 * Compatibility characters read as the plain ones (Unicode NFKC, per character): ligatures
 * ("ﬂuorinated"), fullwidth forms ("Ｆｅ３Ｏ４", "＝"), small forms ("﹣") and the mathematical
 * alphanumerics of MathML titles ("𝐅𝐞" in bold). The rest of the title keeps its characters.
 */
const COMPAT_RE = /[\ufb00-\ufb06\ufe50-\ufe6b\uff01-\uff5e]|\ud835[\udc00-\udfff]/g;
const TAG_RE = /<\/?[a-zA-Z][^>]*>/g;
const LATEX_SUB = /\$[_^]\{?([^}$]*)\}?\$/g;

// ---------------------------------------------------------------- tagging

function isUpper(c: number): boolean {
  return c >= 65 && c <= 90;
}

/** A letters-only token of one-letter symbols, all capitals ("COF", "PVC", "NOx" -> "NO"). */
function capsOnlySingles(p: Parsed, token: string): boolean {
  if (!p.symbols.every((s) => s.length === 1)) return false;
  if (/\d{3}/.test(token)) return true; // "CPOSS209": a name with a number, not a formula
  return !/\d/.test(token) && !/[+-]$/.test(token) && !token.includes('(');
}

/** A capitalized word (not a formula): "Niña", "Khobar", "Hajar". */
const CAPITALIZED_WORD = /^[A-Z][a-z]{3}/;
/** Letters-only word with one capital: never a formula ("Bay", "Inn", "Con", "Ray"). */
const PLAIN_WORD = /^[A-Z][a-z]{2,}$/;
/** Symbol with a superscript-style oxidation state written inline: "MoIV", "FeIII". */
const INLINE_ROMAN = /^([A-Z][a-z]?)(?:I{1,3}|IV|VI{0,3})$/;
const CAPS_PLURAL = /^[A-Z]{2,}s$/;
/** A formula ending in a count and then a capitalized word with no space between. */
const GLUED_WORD = /^(.*\d)([A-Z][a-z]{3,}|to|of|and|in|on|for|with|by|from|via|over|eq|e)$/;
/** The "Pi" (phosphate) catalysts of a metal: "CoPi", "Co-Pi", "NiPi". */
const PHOSPHATE_CATALYST = /^(Co|Ni|Fe|Mn)-?Pi$/;
/** The hyphen of "Co-Pi", removed before a token's parts are split. */
const PHOSPHATE_CATALYST_HYPHEN = /(?<![A-Za-z])(Co|Ni|Fe|Mn)-Pi(?![a-z])/g;
const COMPOUND_SEP = /[-/@:\u2192]/;

/** Outer punctuation that is not part of a formula. */
function trimToken(t: string): string {
  let a = 0;
  let b = t.length;
  // brackets stay around a formula with a count or charge after them: "[(PW9O34)2Co4(H2O)2]10-"
  const bracketed = t[0] === '[' && /^\[.*\](?:\d+[+-]*|[+-]+)$/.test(t);
  while (a < b && `"'“‘«[{`.includes(t[a]!) && !(bracketed && a === 0)) a++;
  while (a < b && `"'”’».,;:!?]}`.includes(t[b - 1]!)) b--;
  let s = t.slice(a, b);
  // unbalanced parentheses at the ends: "(Fe", "Ni)", "(OER)"
  let open = 0;
  let close = 0;
  for (let i = 0; i < s.length; i++) {
    const ch = s.charCodeAt(i);
    if (ch === 40) open++;
    else if (ch === 41) close++;
  }
  while (open > close && s[0] === '(') {
    s = s.slice(1);
    open--;
  }
  while (close > open && s[s.length - 1] === ')') {
    s = s.slice(0, -1);
    close--;
  }
  if (s.length > 1 && s[0] === '(' && s[s.length - 1] === ')' && s.indexOf(')') === s.length - 1) {
    s = s.slice(1, -1);
  }
  while (s.length > 0 && '.,;:'.includes(s[s.length - 1]!)) s = s.slice(0, -1);
  // "Cr)3O4" from "(Co, Cr)3O4": a parenthesis, opened in the token before, closed before a count
  if (close > open) s = dropUnmatchedClose(s);
  return s;
}

/** Remove the closing parentheses before a count that have no opening one before them. */
function dropUnmatchedClose(s: string): string {
  let depth = 0;
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const ch = s[i]!;
    if (ch === '(') depth++;
    else if (ch === ')') {
      if (depth === 0 && /\d/.test(s[i + 1] ?? '')) continue;
      if (depth > 0) depth--;
    }
    out += ch;
  }
  return out;
}

type PartKind = 'formula' | 'bare2' | 'single' | 'word';

interface Part {
  kind: PartKind;
  text: string;
  symbols: string[];
}

function classify(text: string): Part {
  if (
    text.length === 0 ||
    !(
      isUpper(text.charCodeAt(0)) ||
      text[0] === 'δ' ||
      text[0] === 'Δ' ||
      (text.charCodeAt(0) >= 48 && text.charCodeAt(0) <= 57) ||
      text[0] === '(' ||
      text[0] === '['
    )
  ) {
    return { kind: 'word', text, symbols: [] };
  }
  if (PLAIN_WORD.test(text)) return wrongCase(text);
  // "VOCs", "SOCs": the plural of an all-capital abbreviation, not a formula ending in Cs
  if (CAPS_PLURAL.test(text) && !CAPS_FORMULA_OK.has(text.slice(0, -1)))
    return { kind: 'word', text, symbols: [] };
  // "NiFeLDH", "AuNPs", "SiNWs": a formula or metal run together with a material abbreviation,
  // read before the whole, which may parse wrongly ("PdNCs" is not Pd, N, Cs); the head keeps a
  // lowercase letter or a digit ("HFNC" is an abbreviation, not HF + NC)
  const tail = ABBREVIATION_TAIL.exec(text);
  if (tail && tail.index >= 2 && /[a-z0-9]/.test(text.slice(0, tail.index))) {
    const head = classify(text.slice(0, tail.index));
    if (head.kind === 'formula' || (head.kind === 'bare2' && !BARE_STOP.has(head.symbols[0]!))) {
      return { kind: 'formula', text, symbols: head.symbols };
    }
  }
  // "MnCe3.67C6Permeable", "CO2to", "CO2e": a formula whose space before the next word was lost
  // (its count ends the formula, a capitalized or a short word follows), or CO2-equivalent's "e"
  const glued = text.charCodeAt(text.length - 1) >= 97 ? GLUED_WORD.exec(text) : null;
  if (glued && (parseFormula(glued[1]!)?.symbols.length ?? 0) >= 2) {
    const head = classify(glued[1]!);
    if (head.kind === 'formula') return head;
  }
  // "CoPi", "Co-Pi": the cobalt phosphate water-oxidation catalyst (and its Ni, Fe, Mn kin)
  const pi = text.endsWith('Pi') ? PHOSPHATE_CATALYST.exec(text) : null;
  if (pi) return { kind: 'formula', text, symbols: [pi[1]!, 'P'] };
  const roman = INLINE_ROMAN.exec(text);
  if (roman && FORMULA_SYMBOLS.has(roman[1]!) && roman[1]!.length === 2) {
    return { kind: 'formula', text, symbols: [roman[1]!] };
  }
  const p = parseFormula(text);
  if (!p) return wrongCase(text);
  if (p.symbols.length === 1 && !p.marked) {
    return { kind: p.symbols[0]!.length === 2 ? 'bare2' : 'single', text, symbols: p.symbols };
  }
  if (p.symbols.length === 1 && p.symbols[0]!.length === 1) {
    // one-letter symbol with a mark: only whitelisted counts, isotopes, oxidation states
    if (SINGLE_COUNT_OK.has(text) || p.isotope || text.includes('(')) {
      return { kind: 'formula', text, symbols: p.symbols };
    }
    // "Nx" in "Ni-Nx sites", "N4" in "Fe-N4 sites" (the atoms around a single metal atom): like a
    // bare letter, an element only next to another symbol
    if (/^(?:[A-Z][xyz]|[NOS][1-6])$/.test(text)) return { kind: 'single', text, symbols: p.symbols };
    return { kind: 'word', text, symbols: [] };
  }
  if (capsOnlySingles(p, text)) {
    if (!CAPS_FORMULA_OK.has(text) && !CAPS_FORMULA_OK.has(text.replace(/x$/, ''))) {
      return { kind: 'word', text, symbols: [] };
    }
  }
  return { kind: 'formula', text, symbols: p.symbols };
}

/** A formula lowercased by a title-case converter ("Tio2", "Zno"), else a word. */
function wrongCase(text: string): Part {
  const p = parseWrongCase(text);
  return p ? { kind: 'formula', text, symbols: p.symbols } : { kind: 'word', text, symbols: [] };
}

function isAllCaps(title: string): boolean {
  let upper = 0;
  let lower = 0;
  for (let i = 0; i < title.length; i++) {
    const c = title.charCodeAt(i);
    if (c >= 65 && c <= 90) upper++;
    else if (c >= 97 && c <= 122) lower++;
  }
  return upper + lower >= 12 && lower < (upper + lower) * 0.15;
}

/** Tag a title with its headline elements: unique symbols sorted by atomic number. */
export function tagElements(title: string): string[] {
  if (!title) return [];
  let t = title;
  if (t.includes('<')) t = t.replace(TAG_RE, '');
  // biome-ignore lint/suspicious/noControlCharactersInRegex: ASCII range test
  if (/[^\x00-\x7f]/.test(t)) {
    t = t.replace(FOLD_RE, (ch) => FOLD[ch] ?? ch).replace(COMPAT_RE, (ch) => ch.normalize('NFKC'));
  }
  if (t.includes('$')) t = t.replace(LATEX_SUB, '$1'); // CO$_2$
  const found = new Set<string>();

  // pass 1: words
  const foreign = tagWords(t, found);
  // pass 2: formula tokens; in an all-caps title only tokens that kept lowercase letters ("FeNi")
  const allCaps = isAllCaps(t);
  const raw = (t.includes('\t') || t.includes('\n') ? t.replace(/[\t\r\n]/g, ' ') : t).split(' ');
  const ctx: Ctx = {
    raw,
    titleCase: isTitleCase(raw),
    foreign,
    found,
    hits: new Uint8Array(raw.length + 2),
    placeholder: placeholders(t),
  };
  const singles: number[] = [];
  let listMode = false;
  for (let k = 0; k < raw.length; k++) {
    let r = raw[k]!;
    if (r.length === 0) continue;
    // "Catalysts": the common case in title-case titles ("Zno" is ZnO lowercased)
    if (isPlainCapitalized(r) && parseWrongCase(r) === null && !(ctx.titleCase && METAL_RUN.test(r)))
      continue;
    const eq = r.lastIndexOf('=');
    if (eq >= 0 && isDoubleBond(r)) {
      // "Ni=O", "Fe═O": a bond, not a set, read like "Ni-O"; "C=O", "C═N" stay organic bonds
      r = r.replace('=', '-');
    } else if (eq >= 0) {
      listMode = true; // "(M = Fe, Co, Ni)", "(X = Ga, In; Y = S, Se)": every item is an element
      if (eq === r.length - 1) continue;
      r = r.slice(eq + 1); // "(M=Co," "(A=Ca,"
    }
    if (r.charCodeAt(0) >= 97 && hasEarlyCapital(r)) r = withoutGluedLead(r);
    const c0 = r.charCodeAt(0);
    // quick skip: formulas start with a capital, a digit, δ or a bracket ("g-C3N4" is a compound)
    if (
      c0 >= 97 &&
      c0 <= 122 &&
      !COMPOUND_SEP.test(r) &&
      !(c0 === 115 && SUPERCRITICAL_CO2.test(trimToken(r)))
    ) {
      if (listMode) {
        const item = listedLowercase(r);
        if (item)
          found.add(item); // "(E = S, Se and te)", "(M=Ti, hf)"
        else if (!r.endsWith(',') && r !== 'and' && r !== 'or') listMode = false;
        if (/[);]$/.test(r)) listMode = false;
      }
      continue;
    }
    if (allCaps && !/[a-z]/.test(r)) continue;
    const before = found.size;
    const single = tagToken(r, k, ctx, listMode);
    if (found.size > before) ctx.hits[k] = 1;
    if (single) singles.push(k);
    if (listMode && /[);]$/.test(r)) listMode = false;
  }
  // one-letter symbols listed with other elements: "Mo and W single atoms", "Al and V co-doped"
  for (let round = 0; round < 2 && singles.length > 0; round++) {
    for (const k of singles) {
      if (ctx.hits[k]) continue;
      const prev = raw[k - 1]?.toLowerCase();
      const next = raw[k + 1]?.toLowerCase();
      const linked =
        ((prev === 'and' || prev === 'or') && k >= 2 && (ctx.hits[k - 2] || namedElsewhere(k - 2, ctx))) ||
        ((next === 'and' || next === 'or') && (ctx.hits[k + 2] || namedElsewhere(k + 2, ctx))) ||
        (prev?.endsWith(',') && k >= 1 && ctx.hits[k - 1]) ||
        (raw[k]!.endsWith(',') && ctx.hits[k + 1]) ||
        // "U Pb dating": an isotope system whose dash was lost
        (ctx.hits[k + 1] && DATING_NEXT.has(trimToken(raw[k + 2] ?? '').toLowerCase()));
      if (linked) {
        found.add(trimToken(raw[k]!));
        ctx.hits[k] = 1;
      }
    }
  }
  if (found.size === 0) return [];
  const out = [...found];
  out.sort((a, b) => Z.get(a)! - Z.get(b)!);
  return out;
}

/** A short word glued before a formula ("ofNi3S2", "toC2H4") or the "e" of "eCO2RR". */
const GLUED_LEAD = /^(?:of|to|on|in|and|for|with|by|from|via|over|e)(?=[A-Z])/;

/** A capital among the second to fifth characters: where a glued short word would end. */
function hasEarlyCapital(r: string): boolean {
  for (let i = 1; i < 5 && i < r.length; i++) if (isUpper(r.charCodeAt(i))) return true;
  return false;
}

/** The token without a short word that lost its space before a formula, else the token. */
function withoutGluedLead(r: string): string {
  const lead = GLUED_LEAD.exec(r);
  if (!lead) return r;
  const rest = r.slice(lead[0].length);
  const t = trimToken(rest);
  // "eCO2RR", "eNO3RR": the electrochemical reduction reactions only
  const formula = lead[0] === 'e' ? t.endsWith('RR') && t.length > 3 && t.slice(0, -2) : t;
  return formula && classify(formula).kind === 'formula' ? rest : r;
}

/** Words after an isotope pair ("U Pb dating", "K Ar ages"). */
const DATING_NEXT = new Set([
  'dating',
  'date',
  'dates',
  'age',
  'ages',
  'geochronology',
  'isotope',
  'isotopes',
  'isotopic',
]);

/**
 * A bare one-letter symbol token ("O" in "N and O") whose element the title names elsewhere
 * ("oxygen evolution"): enough to anchor the symbol listed with it.
 */
function namedElsewhere(k: number, ctx: Ctx): boolean {
  const t = ctx.raw[k];
  if (t === undefined) return false;
  const s = trimToken(t);
  return s.length === 1 && ctx.found.has(s);
}

/**
 * "C=O", "(Si=O)", "Fe(IV)=O": a double bond between two symbols, not a placeholder set ("M=Co,",
 * "B=Ru,").
 */
function isDoubleBond(r: string): boolean {
  const m = /^\(?([A-Z][a-z]?)(?:\([IV]{1,3}\))?=([A-Z][a-z]?)\)?$/.exec(r);
  return m !== null && FORMULA_SYMBOLS.has(m[1]!) && FORMULA_SYMBOLS.has(m[2]!);
}

/** A two-letter symbol written in lowercase as an item of a set ("hf)", "te,"); not "in", "as". */
function listedLowercase(r: string): string | undefined {
  const t = trimToken(r);
  if (t.length !== 2) return undefined;
  const sym = t[0]!.toUpperCase() + t[1];
  return FORMULA_SYMBOLS.has(sym) && !BARE_STOP.has(sym) ? sym : undefined;
}

/** A capital and then only lowercase ASCII letters, 3+ long: never a formula nor a list marker. */
function isPlainCapitalized(r: string): boolean {
  const n = r.length;
  if (n < 3) return false;
  const c = r.charCodeAt(0);
  if (c < 65 || c > 90) return false;
  for (let i = 1; i < n; i++) {
    const d = r.charCodeAt(i);
    if (d < 97 || d > 122) return false;
  }
  return true;
}

function isTitleCase(raw: string[]): boolean {
  let long = 0;
  let cap = 0;
  for (const w of raw) {
    if (w.length < 4) continue;
    const c = w.charCodeAt(0);
    if (c >= 97 && c <= 122) long++;
    else if (c >= 65 && c <= 90) {
      long++;
      cap++;
    }
  }
  return long > 0 && cap / long >= 0.6;
}

function startsCapitalizedWord(s: string | undefined): boolean {
  if (!s) return false;
  return CAPITALIZED_WORD.test(s);
}

interface Ctx {
  raw: string[];
  titleCase: boolean;
  foreign: boolean;
  found: Set<string>;
  /** 1 where a token gave an element (for one-letter symbols in lists). */
  hits: Uint8Array;
  /** Placeholders the title defines as a set ("M = Fe, Co"), with their counts; null if none. */
  placeholder: RegExp | null;
}

/** "(M = ", "X=", "TM = ": a placeholder letter defined as a set of elements. */
const PLACEHOLDER_DEF = /(?:^|[\s(,;])([A-Z]{1,2})\s?=/g;

function placeholders(title: string): RegExp | null {
  if (!title.includes('=')) return null;
  const names = new Set<string>();
  // a letter defined as a set is a placeholder even where it is a symbol ("Y = S, Se"); X brings
  // its usual companions Y and Z ("BiXY (X = Se, Te; Y I, Br)")
  for (const m of title.matchAll(PLACEHOLDER_DEF)) {
    // "C=N and N-N bonds": a bond between two symbols is no set
    const after = title.slice((m.index ?? 0) + m[0].length - 1);
    // and a symbol set to a number ("C = 12") is a count, not a placeholder
    if (FORMULA_SYMBOLS.has(m[1]!) && (/^=[A-Z][a-z]?(?![a-z,])/.test(after) || !/^=\s?[A-Z]/.test(after)))
      continue;
    names.add(m[1]!);
  }
  if (names.has('X')) names.add('Y').add('Z');
  if (names.size === 0) return null;
  return new RegExp(`(?:${[...names].join('|')})(?![a-z])[\\d.]*`, 'g');
}

/** Words after a one-letter symbol that make it the element: "S doping", "N and S co-doped". */
const DOPING_NEXT = new Set(['doped', 'doping', 'co-doped', 'codoped', 'co-doping', 'codoping']);
/** Material abbreviations written onto a formula: layered double hydroxide, nanoparticles ... */
const ABBREVIATION_TAIL =
  /(?:LDHs?|LDOs?|MOFs?|NPs|NP|NCs|NSs?|NWs?|NRs?|NTs?|NFs|QDs?|SACs?|SAs|PBAs?|HEAs?|HEOs?|MXenes?|MBenes?)$/;
/**
 * Two to four metal symbols run together and lowercased by a title-case converter ("Nife" from
 * NiFe, "Conip" from CoNiP, "Nifeox" from NiFeOx), with an optional anion: common catalyst metals
 * only, so that words and names ("Latin", "Feni" alone) need the context the callers ask for.
 */
const METAL_RUN =
  /^(?:Fe|Co|Ni|Cu|Mo|Mn|Zn|Pt|Pd|Ru|Ir|Rh|Ag|Au|Cr|Sn|Bi)(?:fe|co|ni|cu|mo|mn|zn|pt|pd|ru|ir|rh|ag|au|cr|sn|bi){1,3}(?:p|s|se|ox|oh|ooh)?$/;
const RUN_ANION: Record<string, string[]> = {
  p: ['P'],
  s: ['S'],
  se: ['Se'],
  ox: ['O'],
  oh: ['O', 'H'],
  ooh: ['O', 'H'],
};
/** Words after a lowercased metal run that show it is a material ("Nimo Alloys", "Cofe Electrocatalysts"). */
const MATERIAL_NEXT = new Set(
  (
    'alloy alloys nanoparticle nanoparticles nanoalloys ldh ldhs layered hydroxide hydroxides oxide oxides ' +
    'oxyhydroxide oxyhydroxides phosphide phosphides sulfide sulfides selenide selenides binary bimetallic ' +
    'catalyst catalysts electrocatalyst electrocatalysts nanosheets nanowires nanocrystals aerogel aerogels ' +
    'glycerate prussian thin-film films'
  ).split(' '),
);

function metalRun(text: string): { symbols: string[]; oxide: boolean } | null {
  if (text.length < 4 || text.length > 12 || !METAL_RUN.test(text)) return null;
  const symbols: string[] = [];
  let i = 0;
  for (; i + 2 <= text.length; i += 2) {
    const sym = text[i]!.toUpperCase() + text[i + 1]!;
    if (!FORMULA_SYMBOLS.has(sym) || RUN_ANION[text.slice(i)]) break;
    symbols.push(sym);
  }
  const anion = RUN_ANION[text.slice(i)];
  if (anion) symbols.push(...anion);
  return { symbols, oxide: text.endsWith('ox') };
}

/** Coronavirus names: "SARS-CoV-2", "MERS-CoV", "CoV-2", "HCoV-OC43" (not "CoV-LDH", a formula). */
const CORONAVIRUS = /^(?:(?:SARS|MERS)-)?H?CoV(?:-(?:2|19|229E|OC43|NL63|HKU1))?$/;
/** Supercritical CO2 written with its prefix: "scCO2", "sCO2", "ScCO2", "Scco2", "SC-CO2". */
const SUPERCRITICAL_CO2 = /^(?:s|sc|Sc|SC)-?(?:CO2|co2)$|^Scco2$/;
/** Words after "Co2" that show it is a miswritten CO2. */
const CO2_NEXT = new Set([
  'reduction',
  'capture',
  'emission',
  'emissions',
  'conversion',
  'electroreduction',
  'adsorption',
  'hydrogenation',
  'storage',
  'sequestration',
  'utilization',
  'methanation',
]);

/**
 * Tag one whitespace token. Returns true when it is a bare one-letter symbol that may still be an
 * element through a list ("Mo and W").
 */
function tagToken(r: string, k: number, ctx: Ctx, listMode: boolean): boolean {
  const { raw, titleCase, foreign, found } = ctx;
  let tok = trimToken(r);
  if (tok.includes('-Pi')) tok = tok.replace(PHOSPHATE_CATALYST_HYPHEN, '$1Pi');
  if (tok.length === 0) return false;
  // "N,S-codoped", "Fe,Co-doped": every listed symbol is a dopant
  const dop = /^((?:[A-Z][a-z]?,)+[A-Z][a-z]?)-(?:co-?)?dop(?:ed|ing)$/i.exec(tok);
  if (dop) {
    for (const s of dop[1]!.split(',')) if (FORMULA_SYMBOLS.has(s)) found.add(s);
    return false;
  }
  if (tok === 'δD') {
    found.add('H'); // deuterium ratio
    return false;
  }
  // "Co2 Reduction", "Co2 to C1": CO2 in a title-case title (cobalt with a bare count of 2 is rare,
  // Co2+ keeps its charge); elsewhere only before a CO2 word
  if (tok === 'Co2' && (titleCase || CO2_NEXT.has(trimToken(raw[k + 1] ?? '').toLowerCase()))) {
    found.add('C');
    found.add('O');
    return false;
  }
  // "SARS-CoV-2", "CoV-2", "HCoV-229E": coronaviruses, not cobalt and vanadium
  if (CORONAVIRUS.test(tok)) return false;
  // "ScCO2", "Scco2", "SC-CO2": supercritical CO2, not scandium
  if (SUPERCRITICAL_CO2.test(tok)) {
    found.add('C');
    found.add('O');
    return false;
  }
  let single = false;
  // commas outside parentheses separate list items: "Fe,Ni" (but "(Ni,Fe)OOH" is one formula)
  const pieces = tok.includes(',') && !tok.includes('(') ? tok.split(',') : [tok];
  for (const piece of pieces) {
    if (piece.length === 0) continue;
    let whole = classify(piece);
    // CO2RR, NO3RR: a formula followed by the reaction abbreviation "RR"
    if (whole.kind === 'word' && piece.length > 3 && piece.endsWith('RR')) {
      const head = classify(piece.slice(0, -2));
      if (head.kind === 'formula') whole = head;
    }
    // "MOOH (M = Fe, Co)", "Nb30X25Ti25 (X = Zr, Mo)": the formula without its placeholder
    if (whole.kind === 'word' && ctx.placeholder) {
      const bare = piece.replace(ctx.placeholder, '');
      if (bare !== piece && bare.length > 0) {
        const rest = classify(bare);
        if (rest.kind === 'formula' || (rest.kind === 'bare2' && !BARE_STOP.has(rest.symbols[0]!))) {
          whole = { kind: 'formula', text: piece, symbols: rest.symbols };
        }
      }
    }
    if (whole.kind === 'formula') {
      for (const s of whole.symbols) found.add(s);
      continue;
    }
    if (whole.kind === 'bare2' || whole.kind === 'single') {
      const sym = whole.symbols[0]!;
      if (listMode) found.add(sym);
      else if (whole.kind === 'bare2') {
        if (bareOk(sym, r, k, raw, titleCase, foreign)) found.add(sym);
      } else if (DOPING_NEXT.has(trimToken(raw[k + 1] ?? '').toLowerCase())) found.add(sym);
      else if (pieces.length === 1) single = true;
      continue;
    }
    if (!COMPOUND_SEP.test(piece)) {
      // "Nimo Alloys", "Amorphous Nifeox": a lowercased metal run before a material word
      const run = titleCase ? metalRun(piece) : null;
      if (run && (run.oxide || MATERIAL_NEXT.has(trimToken(raw[k + 1] ?? '').toLowerCase()))) {
        for (const s of run.symbols) found.add(s);
      }
      continue;
    }
    compound(piece, k, raw, titleCase, foreign, found);
  }
  return single;
}

/** Whether a bare two-letter symbol token (no hyphen partner) is the element. */
function bareOk(
  sym: string,
  r: string,
  k: number,
  raw: string[],
  titleCase: boolean,
  foreign: boolean,
): boolean {
  if (BARE_STOP.has(sym) || foreign) return false;
  const next = raw[k + 1];
  if (k === 0 && FIRST_WORD_STOP.has(sym)) return false;
  // "Ca. 100", "Co. Ltd": an abbreviation with a period inside the title
  if (r.endsWith('.') && next !== undefined) return false;
  // "2.7 Ga": giga-annum
  if (sym === 'Ga' && k > 0 && /\d$/.test(raw[k - 1]!)) return false;
  // "La Niña", "Al Hajar": a capitalized next word in a sentence-case title is a proper name
  if (!titleCase && startsCapitalizedWord(next) && !isChemWord(next!)) return false;
  return true;
}

function isChemWord(s: string): boolean {
  const w = s.toLowerCase().replace(/[^a-z].*$/, '');
  return namesElement(w) || CHEM_PARTNER.has(w);
}

/** A token joined by -, /, @ or : (Pt/C, Co-N-C, Fe-doped, Li-ion, U-Pb, lithium-ion). */
function compound(
  piece: string,
  k: number,
  raw: string[],
  titleCase: boolean,
  foreign: boolean,
  found: Set<string>,
): void {
  const texts = piece.split(COMPOUND_SEP).map(trimToken); // "Ni)-doped" in "(M = Fe, Co, Ni)-doped"
  const parts = texts.map(classify);
  if (titleCase) {
    // "Nife-Ldh", "Conip@Ni2p", "Cupt/C": a lowercased metal run joined to another part
    for (let j = 0; j < parts.length; j++) {
      if (parts[j]!.kind !== 'word') continue;
      const run = metalRun(texts[j]!);
      if (run) parts[j] = { kind: 'formula', text: texts[j]!, symbols: run.symbols };
    }
  }
  let symbolParts = 0;
  for (const p of parts) if (p.kind !== 'word') symbolParts++;
  for (let j = 0; j < parts.length; j++) {
    const p = parts[j]!;
    if (p.kind === 'word') continue;
    if (p.kind === 'formula') {
      for (const s of p.symbols) found.add(s);
      continue;
    }
    const sym = p.symbols[0]!;
    const nextText = texts[j + 1];
    const partner = nextText?.toLowerCase();
    const hasPartner = partner !== undefined && CHEM_PARTNER.has(partner);
    if (p.kind === 'single') {
      // "Pt/C", "Co-N-C", "Li-S", "U-Pb"; "N-doped", "K-ion"; not "N-C", "I-V", "S-scheme"
      if (anchorOther(parts, j)) found.add(sym);
      else if (partner !== undefined && SINGLE_PARTNER.has(partner)) found.add(sym);
      continue;
    }
    // a two-letter symbol next to other symbols is the element: "Co-N-C", "In-Ga-Zn-O", "He-Ne"
    if (symbolParts > 1 && (anchorOther(parts, j) || !BARE_STOP.has(sym))) {
      if (!foreign || anchorOther(parts, j)) found.add(sym);
      continue;
    }
    if (BARE_STOP.has(sym)) {
      if (hasPartner) found.add(sym); // "In-doped", not "In-situ", "As-prepared"
      continue;
    }
    if (PREFIX_LIKE.has(sym)) {
      // "Co-doping", "Bi-functional", "Re-evaluation" are prefixes
      if (partner === undefined || nextText === undefined) continue;
      if (sym === 'Co' && (partner === 'doped' || partner === 'doping')) {
        // "Co-doped ZnO" is cobalt; after named dopants ("Mo and W atoms Co-Doped", "N, S Co-doped")
        // it is co-doping
        if (j === 0 && tagElements(raw.slice(0, k).join(' ')).length === 0) found.add(sym);
        continue;
      }
      // "Co-MOF", "Co-TDPAT": a metal with a ligand or framework abbreviation
      if (/^[A-Z]{2,}/.test(nextText)) {
        found.add(sym);
        continue;
      }
      if (hasPartner) found.add(sym);
      continue;
    }
    if (foreign) continue;
    if (k === 0 && j === 0 && FIRST_WORD_STOP.has(sym) && !hasPartner) continue;
    // "Al-Khobar": a capitalized non-chemical partner in a sentence-case title is a proper name
    if (!titleCase && nextText !== undefined && startsCapitalizedWord(nextText) && !isChemWord(nextText))
      continue;
    found.add(sym);
  }
}

/** Another part of the compound is a formula or a two-letter symbol that is not a word. */
function anchorOther(parts: Part[], j: number): boolean {
  return parts.some(
    (q, m) => m !== j && (q.kind === 'formula' || (q.kind === 'bare2' && !BARE_STOP.has(q.symbols[0]!))),
  );
}
