/**
 * The static pools synthetic records draw from, built once per process from the tables in tables/
 * (sources, institutions, names, funders, SDGs, MeSH, concepts, title words, work types): each
 * entity is pre-serialised to the JSON fragment records.ts pastes into a record, with its OpenAlex
 * id derived from a hash of its name, and the weighted ones get their sampler. The tables are data
 * only; what turns them into records is code (records.ts).
 *
 * Changing a table changes the generated corpus (and so every benchmark's data_version): the
 * output of `ri generate` is pinned by test/integration/synthetic/generate.test.ts.
 */

import { utf8 } from './byte-writer.js';
import { hashString, WeightedSampler, zipfSampler } from './random.js';
import authorNames from './tables/author-names.json' with { type: 'json' };
import funders from './tables/funders.json' with { type: 'json' };
import institutions from './tables/institutions.json' with { type: 'json' };
import sources from './tables/sources.json' with { type: 'json' };
import subjects from './tables/subjects.json' with { type: 'json' };
import titles from './tables/titles.json' with { type: 'json' };
import works from './tables/works.json' with { type: 'json' };

export const OA = 'https://openalex.org/';
const J = JSON.stringify;

interface SourceRow {
  name: string;
  issn_l: string | null;
  second_issn: string | null;
  publisher: string;
  doi_prefix: string;
  is_oa: boolean;
  type: string;
}

interface Source {
  /** The source object's JSON, UTF-8. */
  json: Uint8Array;
  name: string;
  /** JSON string of the name, UTF-8. */
  nameJson: Uint8Array;
  publisher: string;
  doiPrefix: string;
  isOa: boolean;
  type: string;
  abbrev: string;
}

function sourceJson(id: string, row: SourceRow, isInDoaj: boolean): string {
  const { name, issn_l: issnL, second_issn: issn2, publisher, is_oa: isOa, type } = row;
  const pub = `P${4310300000 + (hashString(publisher) % 99999)}`;
  const issn = issnL ? (issn2 && issn2 !== issnL ? [issnL, issn2] : [issnL]) : null;
  return J({
    id,
    display_name: name,
    issn_l: issnL,
    issn,
    is_oa: isOa,
    is_in_doaj: isInDoaj,
    is_core: type === 'journal',
    host_organization: `${OA}${pub}`,
    host_organization_name: publisher,
    host_organization_lineage: [`${OA}${pub}`],
    host_organization_lineage_names: [publisher],
    type,
  });
}

const SOURCE_POOL: Source[] = sources.sources.map((row) => {
  const id = `${OA}S${100000000 + (hashString(row.name) % 4200000000)}`;
  const abbrev = row.name
    .split(/[^A-Za-z]+/)
    .filter((w) => w.length > 2)
    .map((w) => w[0]!.toLowerCase())
    .join('');
  return {
    json: utf8(sourceJson(id, row, row.is_oa && row.type === 'journal')),
    name: row.name,
    nameJson: utf8(J(row.name)),
    publisher: row.publisher,
    doiPrefix: row.doi_prefix,
    isOa: row.is_oa,
    type: row.type,
    abbrev,
  };
});
export const JOURNALS = SOURCE_POOL.filter((s) => s.type === 'journal');
export const BOOKS = SOURCE_POOL.filter((s) => s.type === 'ebook platform');
export const PREPRINT_SERVERS = SOURCE_POOL.filter((s) => s.type === 'repository');
export const JOURNAL_SAMPLER = zipfSampler(JOURNALS.length, 0.7);

/** Repository copies (green OA locations). */
export const REPOSITORIES = sources.repositories.map(({ name, url, oai }) => ({
  url,
  oai,
  sourceJson: utf8(
    sourceJson(
      `${OA}S${4306400000 + (hashString(name) % 99999)}`,
      {
        name,
        issn_l: null,
        second_issn: null,
        publisher: name,
        doi_prefix: '',
        is_oa: true,
        type: 'repository',
      },
      false,
    ),
  ),
}));

export interface Institution {
  id: string;
  country: string;
  /** JSON of the institution object, UTF-8. */
  json: Uint8Array;
  /** Per department: JSON string of the raw affiliation string, UTF-8. */
  raw: Uint8Array[];
}

export const INSTITUTION_POOL: Institution[] = institutions.institutions.map(
  ({ name, country, type, city }) => {
    const h = hashString(name);
    const id = `${OA}I${10000000 + (h % 4000000000)}`;
    const ror = `https://ror.org/0${(h % 0xfffffff).toString(36).padStart(6, '0').slice(0, 6)}${h % 89}`;
    return {
      id,
      country,
      json: utf8(J({ id, display_name: name, ror, country_code: country, type, lineage: [id] })),
      raw: institutions.departments.map((d) => utf8(J(`${d}, ${name}, ${city}, ${country}`))),
    };
  },
);
export const INSTITUTION_SAMPLER = zipfSampler(INSTITUTION_POOL.length, 0.8);

export const FIRST_NAMES: readonly string[] = authorNames.first;
export const LAST_NAMES: readonly string[] = authorNames.last;

export const FUNDERS = funders.map(({ name, ror }) => {
  const id = `${OA}F${4320300000 + (hashString(name) % 99999)}`;
  return { id, name, json: J({ id, display_name: name, ror }), nameJson: J(name) };
});

export const SDGS = subjects.sdgs.map(({ name }, i) => ({
  name: J(name),
  id: J(`https://metadata.un.org/sdg/${i + 1}`),
}));
/** SDGs a chemistry/materials corpus mostly gets: clean energy, climate, water, health. */
export const SDG_SAMPLER = new WeightedSampler(subjects.sdgs.map((s) => s.weight));

/** [descriptor ui, descriptor name]. */
export const MESH: readonly (readonly [string, string])[] = subjects.mesh.map((m) => [m.id, m.name]);
/** [qualifier ui, qualifier name]; an empty pair for none. */
export const MESH_QUALIFIERS: readonly (readonly [string, string])[] = subjects.mesh_qualifiers.map((q) => [
  q.id,
  q.name,
]);

/** `{"id":...,"wikidata":...,"display_name":...,"level":N,"score":` of a concept named `name`. */
export function conceptPrefix(name: string, level: number): string {
  const h = hashString(name);
  return `{"id":"${OA}C${10000000 + (h % 3000000000)}","wikidata":"https://www.wikidata.org/wiki/Q${100 + (h % 9000000)}","display_name":${J(name)},"level":${level},"score":`;
}

export const GENERIC_CONCEPTS = subjects.generic_concepts.map(({ name, level }) =>
  utf8(conceptPrefix(name, level)),
);

/** Element symbols from most to least written about (rough order of the chemistry literature). */
export const ELEMENT_RANKING: readonly string[] = titles.element_ranking;
/** Title phrases for the non-metals, by symbol (metals get formulas and compounds instead). */
export const NONMETAL_PHRASES: Readonly<Record<string, string[]>> = titles.nonmetal_phrases;
export const ANIONS: readonly string[] = titles.anions;
export const METHODS: readonly string[] = titles.methods;
export const STRATEGIES: readonly string[] = titles.strategies;
export const ADJECTIVES: readonly string[] = titles.adjectives;
export const CONTEXTS: readonly string[] = titles.contexts;

/** How much more often a topic of these fields is popular than one of any other field (0.4). */
export const FIELD_BOOST: Readonly<Record<string, number>> = works.field_boost;

/** [type, share, Crossref type]. */
export const TYPES: readonly (readonly [string, number, string])[] = works.types.map((t) => [
  t.type,
  t.weight,
  t.type_crossref,
]);
export const TYPE_SAMPLER = new WeightedSampler(TYPES.map((t) => t[1]));
/** Language codes as JSON text (`"en"`, `null`). */
export const LANGS = works.languages.map((l) => J(l.code));
export const LANG_SAMPLER = new WeightedSampler(works.languages.map((l) => l.weight));
export const OA_STATUS = works.oa_status.map((o) => o.status);
export const OA_SAMPLER = new WeightedSampler(works.oa_status.map((o) => o.weight));
export const LICENSES: readonly string[] = works.licenses;
export const VERSIONS: readonly string[] = works.versions;
