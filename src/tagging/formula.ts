/**
 * The formula reader (DESIGN.md section 2, "by symbol inside a chemical formula"): whether a string
 * reads completely as a formula (element symbols with counts, decimals, x/y/z/δ/n variables, (),
 * [], charges, oxidation states "(III)", hydrate dots, isotope masses (13C, δ18O, 87Sr), MXene
 * "Tx", perovskite "FA"/"MA") and which symbols it names. Symbol case matters; what a formula
 * means in a title (abbreviation, English word) is the tagger's business.
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
const COUNT_XYZ = /^(?:\d+(?:\.\d+)?|\.\d+|[xyzδn])(?:[-+](?:\d+(?:\.\d+)?|[xyzδ]))*/;
const CHARGE = /^\d*[+-]+$/;

/** Parse a whole string as a formula, or return null. Symbol case matters. */
export function parseFormula(s: string): Parsed | null {
  const symbols: string[] = [];
  let marked = false;
  let isotope = false;
  let i = 0;
  const n = s.length;
  let depth = 0;
  const hasX = s.includes('x');
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
      const k = /^\d+/.exec(s.slice(i));
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
