/**
 * The word rules (docs/metrics.md, "Mapping papers to subjects": names, adjectives and anions):
 * lowercase letter runs of a title, read case-insensitively.
 *    - element names and spelling variants (iron, aluminium/aluminum, sulphur/sulfur, caesium/cesium,
 *      phosphorous as a common misspelling of phosphorus), also as a whole hyphen part
 *      ("lithium-ion", "cobalt-free", "nickel-iron") and plurals ("carbons");
 *    - a name inside a longer word only with a chemical suffix (hydrogen+ation, carbon+ization,
 *      oxygen+ated, nickel+ate, hydrogen+ase) and optional de-/re-/organo-/poly- prefix
 *      ("dehydrogenation", "decarbonization", "organosilicon"). Not: "hydrocarbon" (a compound
 *      class, not carbon as a subject), "carbonyl", "silicone", "ironic", "tinted", "non-ferrous".
 *    - Latin adjectives (ferric, cupric, stannous, ...) and the acid adjectives sulfuric, phosphoric,
 *      nitric, boric, hydrochloric, hydrofluoric (their defining element);
 *    - anion / compound-class names for the defining element only, also with prefixes and plurals
 *      ("oxyhydroxides" -> O, "borohydride" -> H, "aluminosilicate" -> Si); not "elaborate".
 *    - "lead" is Pb only in a metal context (lead-free, lead halide, lead ions, of lead, zinc and
 *      lead, lead(II) ...); never "leads", "leading", "lead to". "Iron Age", "gold standard" are not.
 *    - words derived from an element's stem (fluorinated, chlorination, nitrided, sulfidation,
 *      carburized, lithiation, aluminothermic, carbothermal) and oxometalates (titanate, vanadate,
 *      tungstate ...) for their element;
 *    - trivial oxide names (ceria, titania, zirconia, alumina, silica, magnesia, yttria ...): the
 *      metal and O; "Silicon Valley" is not silicon;
 *    - not tagged (decided): graphene/graphite/diamond, ozone, water, oxidation/oxidative,
 *      sulfonated/sulfone (a functional group), fluorescence, chlorin, chlorophyll.
 * v3: mineral names of the iron oxides and of TiO2 (hematite, magnetite, goethite, anatase ...: the
 *    metal and O, as trivial oxide names give; not as weighting materials of drilling fluids, not
 *    rutile, a structure type too); mixed-oxide names ferrite, cobaltite, manganite (their metal);
 *    more -ic/-ous adjectives and acids (chromic, manganous, molybdic, tungstic, arsenious,
 *    perchloric ...) and sulfion; element names after nano- ("nanosilver", "nanocarbons"). Still not
 *    tagged (decided): ferrocene and other compound names, zircon, monazite, cassiterite, ilmenite,
 *    chromite (minerals named as geochronometers or ores), "silicic" (magma).
 * v4: the first element of a mixed anion too, as the labelled titles read it: "borophosphate" ->
 *    B and P, "aluminosilicate" -> Al and Si, "fluorophosphate" -> F and P (boro-, alumino-,
 *    silico-, phospho-, fluoro- before an anion word).
 * v5: more prefixes and trivial names, each a class of its own:
 *    - the first element of a mixed anion also after oxy-, hydroxy-, thio-, seleno-, carbo-, chloro-,
 *      titano- ("oxynitride" -> O and N, "thiophosphate" -> S and P, "carbonitride" -> C and N,
 *      "titanosilicate" -> Ti and Si);
 *    - an element name after a count prefix ("dinitrogen", "dioxygen", "diiron", "trinickel") and
 *      ferroalloy names for both metals ("ferromanganese" -> Fe and Mn, "silicomanganese",
 *      "cupronickel");
 *    - per-/poly- before chlorinated, brominated ("polychlorinated biphenyls" -> Cl);
 *    - the rare-earth and other -ia oxide names (gadolinia, samaria, erbia, strontia, lithia,
 *      beryllia, molybdena ...; "Samaria" only beside a chemical word, it is also a region) and
 *      micro- before them ("microsilica");
 *    - mineral names of functional materials, for their headline elements: manganese oxides
 *      (birnessite, pyrolusite, hausmannite, cryptomelane, todorokite), copper and zinc oxides
 *      (cuprite, tenorite, zincite), aluminium hydroxides (boehmite, gibbsite, bayerite), iron and
 *      nickel sulfides (pyrite, marcasite, pyrrhotite, mackinawite, greigite, pentlandite,
 *      millerite, heazlewoodite), molybdenite, hydroxyapatite (Ca and P, as calcium phosphate
 *      gives) and hydrotalcite (Mg and Al). Not as a structure type ("pyrite-type CoS2",
 *      "mackinawite structures"), not in a geology title (ore, hydrothermal, dating, isotopes: as
 *      the labelled titles leave dolomite, biotite, monazite) nor a drilling-fluid one (as
 *      hematite there); rock-forming and ore minerals
 *      (calcite, dolomite, quartz, clays, galena, sphalerite, chalcopyrite, barite) stay untagged.
 */
import { ELEMENTS } from '../elements/elements.js';

/** Lowercase word -> symbol, for exact word matches. */
const WORD_SYMBOL = new Map<string, string>();
/** Element names (and variants) only: used for in-word prefix matching and "lead" context. */
const NAME_SYMBOL = new Map<string, string>();
for (const e of ELEMENTS) {
  for (const v of new Set([e.name.toLowerCase(), ...e.variants])) NAME_SYMBOL.set(v, e.symbol);
}
NAME_SYMBOL.set('phosphorous', 'P');
NAME_SYMBOL.delete('lead'); // context-dependent, see isLeadMetal
for (const [w, s] of NAME_SYMBOL) WORD_SYMBOL.set(w, s);
const NAME_LENGTHS = [...new Set([...NAME_SYMBOL.keys()].map((n) => n.length))].sort((a, b) => a - b);
/** First three letters of every name: most words fail this before any suffix work. */
const NAME_HEADS = new Set([...NAME_SYMBOL.keys()].map((n) => n.slice(0, 3)));

const ADJECTIVES: Record<string, string> = {
  ferric: 'Fe',
  ferrous: 'Fe',
  cupric: 'Cu',
  cuprous: 'Cu',
  stannic: 'Sn',
  stannous: 'Sn',
  argentic: 'Ag',
  auric: 'Au',
  aurous: 'Au',
  plumbic: 'Pb',
  plumbous: 'Pb',
  mercuric: 'Hg',
  mercurous: 'Hg',
  sulfuric: 'S',
  sulphuric: 'S',
  phosphoric: 'P',
  nitric: 'N',
  nitrous: 'N', // nitrous oxide
  boric: 'B',
  hydrochloric: 'Cl',
  hydrofluoric: 'F',
  // v3: the other -ic/-ous adjectives and acid names of a chemist's reading
  argentous: 'Ag',
  chromic: 'Cr',
  chromous: 'Cr',
  manganic: 'Mn',
  manganous: 'Mn',
  cobaltic: 'Co',
  nickelic: 'Ni',
  molybdic: 'Mo',
  tungstic: 'W',
  arsenious: 'As',
  arsenous: 'As',
  selenious: 'Se',
  perchloric: 'Cl',
  hydrobromic: 'Br',
  hydroiodic: 'I',
  // the sulfide ion's name in the sulfion oxidation reaction (SOR)
  sulfion: 'S',
  sulphion: 'S',
};
for (const [w, s] of Object.entries(ADJECTIVES)) WORD_SYMBOL.set(w, s);

/** Anion / compound-class stems (matched as word endings, singular). */
const ANIONS: [string, string][] = [
  ['oxide', 'O'],
  ['sulfide', 'S'],
  ['sulphide', 'S'],
  ['sulfate', 'S'],
  ['sulphate', 'S'],
  ['sulfite', 'S'],
  ['sulphite', 'S'],
  ['nitride', 'N'],
  ['nitrate', 'N'],
  ['nitrite', 'N'],
  ['carbide', 'C'],
  ['carbonate', 'C'],
  ['phosphide', 'P'],
  ['phosphate', 'P'],
  ['chloride', 'Cl'],
  ['chlorate', 'Cl'],
  ['fluoride', 'F'],
  ['bromide', 'Br'],
  ['iodide', 'I'],
  ['hydride', 'H'],
  ['boride', 'B'],
  ['borate', 'B'],
  ['silicide', 'Si'],
  ['silicate', 'Si'],
  ['selenide', 'Se'],
  ['telluride', 'Te'],
  ['arsenide', 'As'],
  ['arsenate', 'As'],
  // oxometalates, for their metal: "lead zirconate titanate", "iron aluminate", "bismuth vanadate"
  ['titanate', 'Ti'],
  ['zirconate', 'Zr'],
  ['aluminate', 'Al'],
  ['vanadate', 'V'],
  ['molybdate', 'Mo'],
  ['tungstate', 'W'],
  ['chromate', 'Cr'],
  ['manganate', 'Mn'],
  ['ferrate', 'Fe'],
  ['stannate', 'Sn'],
  ['niobate', 'Nb'],
  ['tantalate', 'Ta'],
  ['germanate', 'Ge'],
  ['cuprate', 'Cu'],
  ['antimonate', 'Sb'],
  ['selenate', 'Se'],
  ['tellurate', 'Te'],
  // mixed-oxide names in -ite, for their metal: "cobalt ferrite", "nickel cobaltite", "lanthanum
  // manganite" (also the steel phase ferrite, which is iron); not chromite, an ore mineral named
  // mostly in petrology
  ['ferrite', 'Fe'],
  ['cobaltite', 'Co'],
  ['manganite', 'Mn'],
];
/** Last three letters of every anion stem: a cheap filter before the endsWith loop. */
const ANION_TAILS = new Set(ANIONS.map(([a]) => a.slice(-3)));
/** Words that end like an anion but are not one. */
const NOT_ANION = /(?:laborate|roborate)$/;

/**
 * Words derived from an element's stem rather than its full name ("fluorinated" has no "fluorine"):
 * each pattern is a whole word, so "fluorescence", "chlorin", "chlorophyll", "lithified" are not.
 */
const DERIVED: [RegExp, string][] = [
  [/^(?:de|per|poly|hydro)?fluorinat(?:e|ed|es|ion|ions|ing)$/, 'F'],
  [/^(?:de)?fluoridat(?:ed|ion)$/, 'F'],
  [/^(?:de|re|hydro|per|poly)?chlorinat(?:e|ed|es|ion|ions|ing)$/, 'Cl'],
  [/^(?:de|hydro|per|poly)?brominat(?:e|ed|ion|ions|ing)$/, 'Br'],
  [/^(?:de)?iodinat(?:e|ed|ion|ions|ing)$/, 'I'],
  [/^nitrid(?:ed|ing|ation|ations|ized|ization)$/, 'N'],
  [/^(?:de|re)?sul(?:f|ph)id(?:ed|ing|ation|ations|ized|ization|ated)$/, 'S'],
  [/^(?:de)?carburi[sz](?:e|ed|es|ing|ation|ations)$/, 'C'],
  [/^(?:de)?phosphid(?:ed|ing|ation|ization|ated)$/, 'P'],
  [/^phosphori[sz](?:ed|ation|ing)$/, 'P'],
  [/^seleni[sz](?:ed|ation|ing)$/, 'Se'],
  [/^telluri[sz](?:ed|ation|ing)$/, 'Te'],
  [/^borid(?:ed|ing|ation)$/, 'B'],
  [/^(?:de|re|pre|over)?lithi(?:ate|ated|ation|ations|ating)$/, 'Li'],
  [/^(?:de|re)?sodi(?:ated|ation|ations|ating)$/, 'Na'],
  [/^(?:de)?potassi(?:ated|ation|ations)$/, 'K'],
  // reduction by the element: "aluminothermic", "carbothermal", "magnesiothermic"
  [/^aluminotherm(?:ic|al|ically|y)$/, 'Al'],
  [/^carbotherm(?:ic|al|ically|y)$/, 'C'],
  [/^silicotherm(?:ic|al|ically|y)$/, 'Si'],
  [/^magnesiotherm(?:ic|al|ically|y)$/, 'Mg'],
];

/** The stems of DERIVED: most words fail this one test. */
const DERIVED_STEM =
  /fluori|chlorin|bromin|iodin|nitrid|sul(?:f|ph)id|carburi|phosph|seleni|telluri|borid|lithi|sodi|potassi|therm/;

/**
 * Trivial names of oxides: the metal and O, as "cerium oxide" gives. Only whole words, plurals and
 * nano-/meso-/organo- prefixes ("nanoceria", "aluminas"), so "basilica" is not silica. Not
 * "urania", "germania", "gallia", "india": names of other things first.
 */
const TRIVIAL_OXIDES = new Map<string, string>([
  // v3: mineral names of the iron oxides and oxyhydroxides and of the TiO2 polymorphs other than
  // rutile, which is also a structure type ("rutile IrO2", as perovskite and spinel are); minerals
  // named mostly as geochronometers or ores (zircon, monazite, cassiterite, ilmenite) are not here
  ['hematite', 'Fe'],
  ['haematite', 'Fe'],
  ['magnetite', 'Fe'],
  ['maghemite', 'Fe'],
  ['goethite', 'Fe'],
  ['lepidocrocite', 'Fe'],
  ['akaganeite', 'Fe'],
  ['ferrihydrite', 'Fe'],
  ['wustite', 'Fe'],
  ['anatase', 'Ti'],
  ['brookite', 'Ti'],
  ['ceria', 'Ce'],
  ['titania', 'Ti'],
  ['zirconia', 'Zr'],
  ['alumina', 'Al'],
  ['silica', 'Si'],
  ['magnesia', 'Mg'],
  ['yttria', 'Y'],
  ['hafnia', 'Hf'],
  ['thoria', 'Th'],
  ['lanthana', 'La'],
  ['niobia', 'Nb'],
  ['vanadia', 'V'],
  ['chromia', 'Cr'],
  ['calcia', 'Ca'],
  ['scandia', 'Sc'],
  // v5: the rare-earth, alkaline-earth and other -ia/-a oxide names of ceramics and catalysis
  // ("gadolinia-doped ceria", "molybdena-alumina"); not "baria" (a place name first)
  ['gadolinia', 'Gd'],
  ['samaria', 'Sm'],
  ['praseodymia', 'Pr'],
  ['neodymia', 'Nd'],
  ['europia', 'Eu'],
  ['terbia', 'Tb'],
  ['dysprosia', 'Dy'],
  ['erbia', 'Er'],
  ['ytterbia', 'Yb'],
  ['lutetia', 'Lu'],
  ['strontia', 'Sr'],
  ['lithia', 'Li'],
  ['beryllia', 'Be'],
  ['molybdena', 'Mo'],
  ['tantala', 'Ta'],
]);
const OXIDE_PREFIX = /^(?:nano|meso|micro|organo)/;
/** Oxide names that are also place names ("Samaria"): only beside a chemical word. */
const PLACE_OXIDES = new Set(['samaria']);
/** The mineral names among TRIVIAL_OXIDES ("hematite"), which a drilling-fluid context overrides. */
const MINERAL_OXIDES = new Set(
  [...TRIVIAL_OXIDES.keys()].filter((w) => w.endsWith('ite') || w.endsWith('ase')),
);
/**
 * Words of drilling fluids and well cements, where hematite and magnetite are weighting materials
 * chosen for their density ("hematite-based invert emulsion mud", "hematite filter cake"): the
 * paper is about the fluid, not about iron (as the labelled titles read it).
 */
const WEIGHTING_CONTEXT = new Set(
  'drilling mud muds weighting weighted cement cements cementing sagging sag settling filter'.split(' '),
);

/** The metal a trivial oxide name stands for ("ceria" -> Ce), or undefined. */
function trivialOxideMetal(w: string): string | undefined {
  const base = w.endsWith('s') ? w.slice(0, -1) : w;
  // every name ends in "a" (ceria) or "e" (hematite): most words fail here
  const last = base.charCodeAt(base.length - 1);
  if (last !== 97 && last !== 101) return undefined;
  return TRIVIAL_OXIDES.get(base) ?? TRIVIAL_OXIDES.get(base.replace(OXIDE_PREFIX, ''));
}

/** A mineral oxide name ("hematite", "magnetites") rather than a trivial name ("ceria"). */
function isMineralOxide(w: string): boolean {
  const base = (w.endsWith('s') ? w.slice(0, -1) : w).replace(OXIDE_PREFIX, '');
  return MINERAL_OXIDES.has(base);
}

/**
 * Mineral names of functional materials (catalysts, electrodes, sorbents), for the elements their
 * formula headlines: metal and anion element as "manganese oxide" or "iron sulfide" would give.
 */
const MINERALS = new Map<string, string[]>([
  ['birnessite', ['Mn', 'O']],
  ['pyrolusite', ['Mn', 'O']],
  ['hausmannite', ['Mn', 'O']],
  ['cryptomelane', ['Mn', 'O']],
  ['todorokite', ['Mn', 'O']],
  ['cuprite', ['Cu', 'O']],
  ['tenorite', ['Cu', 'O']],
  ['zincite', ['Zn', 'O']],
  ['boehmite', ['Al', 'O']],
  ['gibbsite', ['Al', 'O']],
  ['bayerite', ['Al', 'O']],
  ['pyrite', ['Fe', 'S']],
  ['marcasite', ['Fe', 'S']],
  ['pyrrhotite', ['Fe', 'S']],
  ['mackinawite', ['Fe', 'S']],
  ['greigite', ['Fe', 'S']],
  ['pentlandite', ['Fe', 'Ni', 'S']],
  ['millerite', ['Ni', 'S']],
  ['heazlewoodite', ['Ni', 'S']],
  ['molybdenite', ['Mo', 'S']],
  ['hydroxyapatite', ['Ca', 'P']],
  ['hydroxylapatite', ['Ca', 'P']],
  ['hydrotalcite', ['Mg', 'Al']],
]);
/** Last three letters of every mineral name: a cheap filter before the lookups. */
const MINERAL_TAILS = new Set([...MINERALS.keys()].map((m) => m.slice(-3)));
/** Words after a mineral name that make it a structure type: "pyrite-type CoS2", "mackinawite structures". */
const STRUCTURE_NEXT = new Set('type types structure structures structured like'.split(' '));
/**
 * Words of a geology title, where a mineral is a rock's or an ore's ("pyrites from the hydrothermal
 * field", "pyrite Re-Os dating"): the labelled titles leave such minerals untagged.
 */
const GEOLOGY_CONTEXT = new Set(
  (
    'ore ores deposit deposits mineralization mineralisation metallogenic metallogeny hydrothermal ' +
    'dating geochronology isotope isotopes isotopic skarn porphyry vein veins granite magmatic ' +
    'sediment sediments sedimentary'
  ).split(' '),
);

/** The elements a mineral name stands for ("pyrites" -> Fe and S), or undefined. */
function mineralElements(w: string): string[] | undefined {
  const base = w.endsWith('s') ? w.slice(0, -1) : w;
  if (!MINERAL_TAILS.has(base.slice(-3))) return undefined;
  return MINERALS.get(base) ?? MINERALS.get(base.replace(OXIDE_PREFIX, ''));
}

/** Words beside a place-like oxide name that make it the oxide ("samaria-doped ceria"). */
const OXIDE_NEIGHBOUR = new Set('doped stabilized stabilised nanoparticles supported'.split(' '));

/** What may follow an element name inside one word ("hydrogenation", "carbonized", "nickelates"). */
const NAME_SUFFIXES = new Set([
  'ation',
  'ations',
  'ated',
  'ating',
  'ate',
  'ates',
  'ase',
  'ases',
  'ous',
  'aceous',
  'ization',
  'izations',
  'ized',
  'izing',
  'isation',
  'ised',
  'ising',
  'making', // ironmaking
]);
const NAME_PREFIXES = ['de', 're', 'organo', 'poly', 'nano'];

const WORD_STOP_NEXT: Record<string, Set<string>> = {
  iron: new Set(['age', 'ages']),
  gold: new Set(['standard', 'standards', 'medal', 'rush', 'coast']),
  silver: new Set(['lining', 'bullet']),
  silicon: new Set(['valley']),
  platinum: new Set(['group']), // platinum-group elements are a class
};

/** Words after "lead" that make it the metal. */
const LEAD_NEXT = new Set(
  (
    'free halide halides acid zirconate titanate oxide oxides dioxide monoxide sulfide sulphide selenide ' +
    'telluride iodide iodides bromide chloride nitrate acetate carbonate chromate ion ions isotope isotopes ' +
    'isotopic contamination contaminated poisoning exposure pollution concentration concentrations level ' +
    'levels content contents toxicity ore ores mine mines mining smelter smelting zinc based perovskite ' +
    'perovskites uptake adsorption removal accumulation bioaccumulation glass alloy alloys metal ii iv ' +
    'and or tin electrode electrodes'
  ).split(' '),
);
const LEAD_PREV = new Set([
  'of',
  'and',
  'or',
  'with',
  'for',
  'tetraethyl',
  'blood',
  'metallic',
  'elemental',
  'soluble',
  'liquid',
  'molten',
]);

const FOREIGN_STOP = new Set(
  (
    'de la le les des du el los las del et para por con una une sur dans und der die das em com um uma y ' +
    'aux pour sobre zur mit von im il della di che per nel ein eine dos da ou au en na'
  ).split(' '),
);
const WORD_SPLIT = /[^a-z]+/;

/**
 * Pass 1 of the tagger: add the symbols the title's words name to found. Returns whether the
 * title reads as another language (two or more foreign stop words), where "tin" is not Sn.
 */
export function tagWords(title: string, found: Set<string>): boolean {
  const words = title.toLowerCase().split(WORD_SPLIT);
  let foreignHits = 0;
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    if (w.length < 2) continue;
    if (FOREIGN_STOP.has(w)) foreignHits++;
    if (w.length < 3) continue;
    if (w === 'lead') {
      if (isLeadMetal(words, i)) found.add('Pb');
      continue;
    }
    const metal = trivialOxideMetal(w);
    if (metal) {
      if (isMineralOxide(w) && words.some((x) => WEIGHTING_CONTEXT.has(x))) continue;
      if (PLACE_OXIDES.has(w) && !besideChemWord(words, i)) continue;
      found.add(metal);
      found.add('O');
      continue;
    }
    const mineral = mineralElements(w);
    if (mineral) {
      if (STRUCTURE_NEXT.has(words[i + 1] ?? '')) continue;
      if (words.some((x) => GEOLOGY_CONTEXT.has(x) || WEIGHTING_CONTEXT.has(x))) continue;
      for (const m of mineral) found.add(m);
      continue;
    }
    const s = wordSymbol(w);
    if (!s) continue;
    const stop = WORD_STOP_NEXT[w];
    if (stop?.has(words[i + 1] ?? '')) continue;
    if (words[i - 1] === 'non' && (w === 'ferrous' || NAME_SYMBOL.has(w))) continue;
    found.add(s);
    const first = mixedAnionFirst(w) ?? alloyFirst(w);
    if (first) found.add(first);
  }
  const foreign = foreignHits >= 2;
  if (foreign) found.delete('Sn'); // "tin" in other languages
  return foreign;
}

/** Prefixes that name the first element of a mixed anion ("borophosphate", "aluminosilicate"). */
const MIXED_ANION_PREFIXES: [string, string][] = [
  ['boro', 'B'],
  ['alumino', 'Al'],
  ['silico', 'Si'],
  ['phospho', 'P'],
  ['fluoro', 'F'],
  // v5: "oxynitride", "hydroxysulfide", "thiophosphate", "selenophosphate", "carbonitride",
  // "chloroaluminate", "titanosilicate"
  ['oxy', 'O'],
  ['hydroxy', 'O'],
  ['thio', 'S'],
  ['seleno', 'Se'],
  ['carbo', 'C'],
  ['chloro', 'Cl'],
  ['titano', 'Ti'],
];

/** A place-like oxide name ("samaria") with a chemical word or an element beside it. */
function besideChemWord(words: string[], i: number): boolean {
  for (const x of [words[i - 1], words[i + 1]]) {
    if (x !== undefined && (OXIDE_NEIGHBOUR.has(x) || namesElement(x))) return true;
  }
  return false;
}

/**
 * Prefixes before a whole element name: counts ("dinitrogen", "diiron", "trinickel"), forms
 * ("nanosilver", "organotin", "polysulfur") and the ferroalloys, which name a second metal
 * ("ferromanganese" -> Fe and Mn, "silicomanganese", "cupronickel").
 */
const WHOLE_NAME_PREFIXES: [string, string | undefined][] = [
  ['organo', undefined],
  ['poly', undefined],
  ['nano', undefined],
  ['mono', undefined],
  ['di', undefined],
  ['bi', undefined],
  ['tri', undefined],
  ['tetra', undefined],
  ['ferro', 'Fe'],
  ['silico', 'Si'],
  ['cupro', 'Cu'],
];

/** Any of the whole-name prefixes followed by the start of an element name: most words fail this. */
const WHOLE_NAME_PREFIX_RE = new RegExp(
  `^(?:${WHOLE_NAME_PREFIXES.map(([p]) => p).join('|')})(?:${[...NAME_HEADS].join('|')})`,
);

/** The element name after a whole-name prefix ("diiron" -> iron's Fe), with the prefix's element. */
function prefixedName(w: string): { name: string; prefix: string | undefined } | undefined {
  if (!WHOLE_NAME_PREFIX_RE.test(w)) return undefined;
  for (const [p, prefix] of WHOLE_NAME_PREFIXES) {
    if (!w.startsWith(p) || w.length < p.length + 3) continue;
    const rest = w.slice(p.length);
    const name =
      NAME_SYMBOL.get(rest) ?? (rest.endsWith('s') ? NAME_SYMBOL.get(rest.slice(0, -1)) : undefined);
    if (name) return { name, prefix };
  }
  return undefined;
}

/** The first metal of a ferroalloy name ("ferromanganese" -> Fe). */
function alloyFirst(w: string): string | undefined {
  return prefixedName(w)?.prefix;
}

/** The element a mixed anion's prefix names, when the rest of the word is an anion word. */
function mixedAnionFirst(w: string): string | undefined {
  for (const [prefix, symbol] of MIXED_ANION_PREFIXES) {
    if (!w.startsWith(prefix) || w.length < prefix.length + 5) continue;
    const rest = w.slice(prefix.length);
    const base = rest.endsWith('s') ? rest.slice(0, -1) : rest;
    if (ANIONS.some(([stem]) => base === stem || base.endsWith(stem))) return symbol;
  }
  return undefined;
}

/** Whether a lowercase word names an element by the word rules ("lead" counts here). */
export function namesElement(w: string): boolean {
  return w === 'lead' || wordSymbol(w) !== undefined || trivialOxideMetal(w) !== undefined;
}

function isLeadMetal(words: string[], i: number): boolean {
  const next = words[i + 1];
  const prev = words[i - 1];
  if (next !== undefined && LEAD_NEXT.has(next)) {
    if (next === 'and' || next === 'or') {
      const after = words[i + 2];
      return after !== undefined && (NAME_SYMBOL.has(after) || after === 'zinc');
    }
    return true;
  }
  if (prev !== undefined && LEAD_PREV.has(prev)) {
    if (prev === 'and' || prev === 'or') {
      const before = words[i - 2];
      return before !== undefined && NAME_SYMBOL.has(before);
    }
    if (prev === 'of' || prev === 'with' || prev === 'for') {
      // "removal of lead", "of lead from", not "the lead of" / "for lead optimization"
      return next === undefined || next === 'in' || next === 'from' || next === 'by' || next === 'on';
    }
    return true;
  }
  if (next !== undefined && NAME_SYMBOL.has(next)) return true; // "lead-bismuth eutectic"
  if (prev !== undefined && NAME_SYMBOL.has(prev)) return true; // "copper lead zinc"
  return false;
}

function wordSymbol(w: string): string | undefined {
  const exact = WORD_SYMBOL.get(w);
  if (exact) return exact;
  const n = w.length;
  if (n < 4) return undefined;
  // plural of a name: "carbons"
  if (w.charCodeAt(n - 1) === 115) {
    const s = NAME_SYMBOL.get(w.slice(0, -1));
    if (s) return s;
  }
  // anion word endings: "oxyhydroxides", "bicarbonate"
  const base = w.charCodeAt(n - 1) === 115 ? w.slice(0, -1) : w;
  if (ANION_TAILS.has(base.slice(-3)) && !NOT_ANION.test(base)) {
    for (const [stem, sym] of ANIONS) if (base.endsWith(stem)) return sym;
  }
  // a whole name after a prefix: "organotin", "nanosilver", "diiron", "ferromanganese"
  if (n >= 6) {
    const prefixed = prefixedName(w);
    if (prefixed) return prefixed.name;
  }
  // name + chemical suffix, optionally after a prefix: "dehydrogenation", "carbonization"
  if (n > 6) {
    if (DERIVED_STEM.test(w)) for (const [pattern, sym] of DERIVED) if (pattern.test(w)) return sym;
    for (const p of NAME_PREFIXES) {
      if (!w.startsWith(p)) continue;
      const r = nameWithSuffix(w, p.length);
      if (r) return r;
    }
    return nameWithSuffix(w, 0);
  }
  return undefined;
}

function nameWithSuffix(w: string, start: number): string | undefined {
  if (!NAME_HEADS.has(w.slice(start, start + 3))) return undefined;
  for (const len of NAME_LENGTHS) {
    if (start + len >= w.length) break;
    const s = NAME_SYMBOL.get(w.slice(start, start + len));
    if (s && NAME_SUFFIXES.has(w.slice(start + len))) return s;
  }
  return undefined;
}
