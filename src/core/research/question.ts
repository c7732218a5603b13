import { ELEMENTS, findElement } from '../../elements/elements.js';
import { tagElements } from '../../tagging/tagger.js';

/**
 * A research question read as full-text terms: its words, each with its alternatives (the
 * field's shorthand expanded, element names and symbols both ways), stop words left out.
 */

/** Shorthand of the field, expanded before matching (the question keeps its own words too). */
const ABBREVIATIONS: Record<string, string> = {
  her: 'hydrogen evolution',
  oer: 'oxygen evolution',
  orr: 'oxygen reduction',
  co2rr: 'co2 reduction',
  nrr: 'nitrogen reduction',
  sei: 'solid electrolyte interphase',
  ldh: 'layered double hydroxide',
  mof: 'metal organic framework',
  mofs: 'metal organic framework',
  cof: 'covalent organic framework',
  dft: 'density functional theory',
  sofc: 'solid oxide fuel cell',
  pem: 'proton exchange membrane',
  lib: 'lithium ion battery',
  libs: 'lithium ion battery',
  saa: 'single atom',
  sac: 'single atom catalyst',
  sacs: 'single atom catalyst',
};

/** Words that say nothing of a subject or a question's topic (its glue). */
export const STOP_WORDS: ReadonlySet<string> = new Set([
  'a',
  'an',
  'and',
  'the',
  'of',
  'for',
  'in',
  'on',
  'to',
  'with',
  'by',
  'from',
  'at',
  'is',
  'are',
  'vs',
  'via',
]);

/** Questions of at most this many words may be about elements (see termGroups). */
const ELEMENT_QUESTION_WORDS = 4;

export interface TermGroup {
  /** The word of the question. */
  word: string;
  /** FTS alternatives: the word, its expansion, the element name or symbol. */
  alternatives: string[];
}

export function ftsToken(s: string): string {
  return `"${s.replaceAll('"', '')}"`;
}

/** The question's words with their expansions (HER -> hydrogen evolution; Li <-> lithium). */
export function termGroups(q: string): TermGroup[] {
  const words = q
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w.length > 0)
    .slice(0, 16);
  const groups: TermGroup[] = [];
  // Element names and symbols stand for each other only in a question about elements (a few
  // words): in a longer one ('In situ...', '... on copper substrates') they would widen it to
  // every title naming the element.
  const aboutElements =
    words.filter((w) => !STOP_WORDS.has(w.toLowerCase())).length <= ELEMENT_QUESTION_WORDS;
  for (const raw of words) {
    const word = raw.toLowerCase();
    if (STOP_WORDS.has(word)) continue;
    const alternatives = [ftsToken(word)];
    // A formula as typed (Fe3O4) and as paper titles show it (Fe₃O₄: see ingest/paper-record.ts).
    const scripted = subscriptDigits(word);
    if (scripted !== word) alternatives.push(ftsToken(scripted));
    // Own keys only: a question word such as 'constructor' is not an abbreviation.
    const expansion = Object.hasOwn(ABBREVIATIONS, word) ? ABBREVIATIONS[word] : undefined;
    if (expansion) alternatives.push(`(${expansion.split(' ').map(ftsToken).join(' AND ')})`);
    // An element symbol as written (Li, Fe) or an element name: both spellings.
    const bySymbol = /^[A-Z][a-z]?$/.test(raw) ? findElement(raw) : undefined;
    const byName = ELEMENTS.find((e) => e.name.toLowerCase() === word || e.variants.includes(word));
    const element = bySymbol ?? byName;
    if (element && aboutElements) {
      alternatives.push(ftsToken(element.name.toLowerCase()), ftsToken(element.symbol.toLowerCase()));
      for (const v of element.variants) alternatives.push(ftsToken(v));
    }
    groups.push({ word: raw, alternatives: [...new Set(alternatives)] });
  }
  return groups;
}

const SUBSCRIPTS = '₀₁₂₃₄₅₆₇₈₉';

/** A formula's digits after a letter as subscripts (fe3o4 -> fe₃o₄); any other word as it is. */
export function subscriptDigits(word: string): string {
  if (!/\p{L}\d/u.test(word)) return word;
  return word.replace(/(?<=[\p{L}\d₀-₉])\d/gu, (d) => SUBSCRIPTS[Number(d)]!);
}

/** A term group as one FTS expression: its alternatives ORed. */
export const groupExpr = (g: TermGroup) =>
  g.alternatives.length === 1 ? g.alternatives[0]! : `(${g.alternatives.join(' OR ')})`;

/** The elements a question names: tagged in its words as in a title, and symbols as written. */
export function questionElements(q: string): Set<string> {
  const symbols = new Set(tagElements(q));
  for (const w of q.split(/[^\p{L}\p{N}]+/u)) {
    const e = /^[A-Z][a-z]?$/.test(w) ? findElement(w) : undefined;
    if (e) symbols.add(e.symbol);
  }
  return symbols;
}
