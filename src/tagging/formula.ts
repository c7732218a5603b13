/**
 * The formula reader (docs/metrics.md, "Mapping papers to subjects": by symbol inside a chemical
 * formula): whether a string reads completely as a formula (element symbols with counts,
 * decimals, x/y/z/δ/n variables, (), [], charges, oxidation states "(III)", hydrate dots,
 * isotope masses (13C, δ18O, 87Sr), MXene "Tx", perovskite "FA"/"MA") and which symbols it
 * names. Symbol case matters; what a formula means in a title (abbreviation, English word) is the
 * tagger's business.
 * v5: a Miller index or a count group in parentheses after the formula ("TiO2(110)",
 * "MoS2(1-x)Se2x"), numbers times a variable ("Se2x"), homologous series ("Srn+1RunO3n+1",
 * "CnH2n+1OH"); in the wrong case also a capital after a parenthesis ("Co(Oh)2"), a charge
 * ("No3-") and more small molecules ("Ch3oh", "So2").
 */
import { ELEMENTS } from '../elements/elements.js';

/** Symbols that may appear in formulas (Z <= 94; not Pm, which is PM2.5 particulate matter). */
export const FORMULA_SYMBOLS = new Set(
  ELEMENTS.filter((e) => e.number <= 94 && e.symbol !== 'Pm').map((e) => e.symbol),
);

export interface Parsed {
  symbols: string[];
  /** Has a count, variable, charge, oxidation state or isotope mass. */
  marked: boolean;
  /** Leading isotope mass of two or more digits, or a δ prefix. */
  isotope: boolean;
}

const ROMAN = /^\((?:I|II|III|IV|V|VI|VII|VIII|0|\d{3,4})\)/; // oxidation state or Miller index
// counts and variables; y/z/n only beside an x ("LixCoyO2"), so "N4Py" is not N, P
const COUNT = /^(?:\d+(?:\.\d+)?|\.\d+|[xδ])(?:[-+](?:\d+(?:\.\d+)?|[xδ]))*/;
// and a number times a variable: "Se2x", "O3n+1"
const COUNT_XYZ = /^(?:\d+(?:\.\d+)?[xyzδn]?|\.\d+|[xyzδn])(?:[-+](?:\d+(?:\.\d+)?[xyzn]?|[xyzδn]))*/;
const CHARGE = /^\d*[+-]+$/;
/** "n+1" in a formula: a homologous series, where n is a count ("Li3n" is Li3N in the wrong case). */
const HOMOLOGOUS_N = /n[+-]\d/;
const COUNT_GROUP = /^\((?:\d{3,4}|\d+(?:\.\d+)?(?:[-+](?:\d+(?:\.\d+)?|[xyzδ]))+)\)/;

/** Parse a whole string as a formula, or return null. Symbol case matters. */
export function parseFormula(s: string): Parsed | null {
  const symbols: string[] = [];
  let marked = false;
  let isotope = false;
  let i = 0;
  const n = s.length;
  let depth = 0;
  // y/z beside an x ("LixCoyO2"); n in a homologous series ("Srn+1RunO3n+1", "CnH2n+1OH")
  const hasX = s.includes('x') || HOMOLOGOUS_N.test(s);
  // isotope prefix: δ18O, 13C, 87Sr (a count before the first symbol)
  if (s[0] === 'δ' || s[0] === 'Δ') {
    i = 1;
    isotope = true;
  }
  const lead = /^\d+/.exec(s.slice(i));
  if (lead) {
    if (lead[0].length >= 2 || isotope) isotope = true;
    // "2H-MoS2", "1T", "3D": a one-digit prefix is a polytype or a label, but "9Cr-1Mo" is a steel grade
    else if (!/^[A-Z][a-z]/.test(s.slice(i + 1, i + 3)) || !FORMULA_SYMBOLS.has(s.slice(i + 1, i + 3)))
      return null;
    i += lead[0].length;
    marked = true;
  }
  while (i < n) {
    const c = s.charCodeAt(i);
    if (c >= 65 && c <= 90) {
      const two = s.slice(i, i + 2);
      if (two.length === 2 && FORMULA_SYMBOLS.has(two)) {
        symbols.push(two);
        i += 2;
      } else if (two === 'Tx' || two === 'Tz') {
        i += 2; // MXene surface terminations
        marked = true;
        continue;
      } else if ((two === 'FA' || two === 'MA') && symbols.length === 0 && i + 2 < n) {
        i += 2; // formamidinium / methylammonium in perovskite formulas
        marked = true;
        continue;
      } else if (FORMULA_SYMBOLS.has(s[i]!)) {
        symbols.push(s[i]!);
        i += 1;
      } else {
        return null;
      }
      const roman = ROMAN.exec(s.slice(i, i + 7));
      if (roman) {
        i += roman[0].length;
        marked = true;
        continue;
      }
    } else if (c === 40 || c === 91) {
      // a Miller index or a count in parentheses after the formula: "TiO2(110)", "MoS2(1-x)Se2x"
      const group = symbols.length > 0 ? COUNT_GROUP.exec(s.slice(i)) : null;
      if (group) {
        i += group[0].length;
        marked = true;
        continue;
      }
      depth++;
      i++;
      continue;
    } else if (c === 41 || c === 93) {
      if (depth === 0) return null;
      depth--;
      i++;
    } else if (c === 183 || c === 44) {
      // hydrate dot (CuSO4·5H2O) or a comma inside parentheses ((Ni,Fe)OOH)
      if (c === 44 && depth === 0) return null;
      i++;
      // the water count of a hydrate may be a variable: "NiMoO4·xH2O", "Mn3O4·nH2O"
      const k = (c === 183 ? /^(?:\d+(?:\.\d+)?|[xn])/ : /^\d+/).exec(s.slice(i));
      if (k) i += k[0].length;
      continue;
    } else {
      // the rest after a charge is not allowed
      const rest = s.slice(i);
      if (CHARGE.test(rest) && symbols.length > 0) {
        marked = true;
        i = n;
        break;
      }
      return null;
    }
    const m = (hasX ? COUNT_XYZ : COUNT).exec(s.slice(i));
    if (m) {
      marked = true;
      i += m[0].length;
    }
  }
  if (depth !== 0 || symbols.length === 0) return null;
  return { symbols, marked, isotope };
}

/** Wrong-case formulas without a digit that have no other reading ("Zno" from ZnO). */
const DIGITLESS_RECASE = new Set(
  'zno nio cuo mgo mno cdse cdte znse zns pbs pbse coooh feooh niooh mnooh'.split(' '),
);
/** Symbols a wrong-case reading may use: not the rare heavy ones ("Ach3" is no actinium hydride). */
const RECASE_SYMBOLS = new Set(
  ELEMENTS.filter((e) => e.number <= 83 && e.symbol !== 'Pm').map((e) => e.symbol),
);
/** One-letter-first formulas a title-case converter writes so ("Wo3" from WO3, "H2o" from H2O). */
const SINGLE_FIRST_RECASE = new Set(
  // v5: the small molecules and anions of the labelled titles' fields ("Ch3oh", "No3-", "So2")
  'wo3 ws2 vs2 h2o nh3 nh4 ch4 n2o v2o5 ch3oh hcooh no2 no3 so2 so3 so4 po4'.split(' '),
);
/** Tokens shaped like wrong-case formulas that are names: cell lines, genes, hybridization. */
const NOT_RECASE = /^(?:h9c2|cas\d+|c?sp[23]|scco2)$|sp[23]$/;

/**
 * A formula a title-case converter lowercased ("Tio2", "Sio2", "Co3o4", "Ni(oh)2", "Co(Oh)2", "No3-"): read the letters
 * as the fewest element symbols, when that reading is the only one with so few symbols, names two
 * or more elements, and carries no count of exactly 1 (gene names: "Csf1", "Cop1"). Returns the
 * re-cased formula's reading, or null.
 */
export function parseWrongCase(word: string): Parsed | null {
  const hasDigit = /\d/.test(word);
  if (!hasDigit && (word.length > 5 || !DIGITLESS_RECASE.has(word.toLowerCase()))) return null;
  // "Co(Oh)2", "No3-": the converter also capitalizes after a parenthesis; a charge ends the formula
  const last = word.charCodeAt(word.length - 1);
  const charge = last === 43 || last === 45 ? /[+-]+$/.exec(word)![0] : '';
  let token = charge ? word.slice(0, -charge.length) : word;
  if (token.includes('(')) token = token.replace(/\(([A-Z])/g, (_m, c: string) => `(${c.toLowerCase()}`);
  if (!/^[A-Z][a-z0-9().]*[a-z][a-z0-9().]*$/.test(token)) return null;
  const lower = token.toLowerCase();
  if (NOT_RECASE.test(lower) || /(?:^|[a-z)])1(?![\d.])/.test(lower)) return null;
  const reading = fewestSymbols(lower);
  if (!reading) return null;
  const first = reading[0]!;
  if (first.length === 1 && !/^[a-z]\d/.test(lower) && !SINGLE_FIRST_RECASE.has(lower)) return null;
  let recased = '';
  let at = 0;
  for (const sym of reading) {
    const next = lower.indexOf(sym.toLowerCase(), at);
    recased += lower.slice(at, next) + sym;
    at = next + sym.length;
  }
  recased += lower.slice(at);
  const p = parseFormula(recased + charge);
  return p && p.symbols.length >= 2 ? p : null;
}

/** The letters of s as the fewest formula symbols (digits and brackets between), if that is unique. */
function fewestSymbols(s: string): string[] | null {
  // best[i]: fewest symbols reading s[i..]; ties make the reading ambiguous
  const n = s.length;
  const best: { count: number; syms: string[]; unique: boolean }[] = new Array(n + 1);
  best[n] = { count: 0, syms: [], unique: true };
  for (let i = n - 1; i >= 0; i--) {
    const c = s.charCodeAt(i);
    if (c < 97 || c > 122) {
      best[i] = best[i + 1]!;
      continue;
    }
    let pick: { count: number; syms: string[]; unique: boolean } | undefined;
    for (const len of [2, 1]) {
      const sym = s[i]!.toUpperCase() + s.slice(i + 1, i + len);
      if (i + len > n || /[^a-z]/.test(s.slice(i, i + len)) || !RECASE_SYMBOLS.has(sym)) continue;
      const rest = best[i + len];
      if (!rest || rest.count < 0) continue;
      const option = { count: rest.count + 1, syms: [sym, ...rest.syms], unique: rest.unique };
      if (!pick || option.count < pick.count) pick = option;
      else if (option.count === pick.count) pick = { ...pick, unique: false };
    }
    best[i] = pick ?? { count: -1, syms: [], unique: false };
  }
  const all = best[0]!;
  return all.count >= 2 && all.unique ? all.syms : null;
}
