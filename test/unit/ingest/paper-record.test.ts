import { describe, expect, it } from 'vitest';
import {
  editionKey,
  hiddenVersions,
  isPreprint,
  normaliseTitle,
  normaliseVenue,
  versionKey,
  type WorkVersion,
} from '../../../src/ingest/paper-record.js';

/** Pinned examples: titles and venues as the bundled sample (fixtures/openalex) carries them. */
describe('normaliseTitle', () => {
  it.each([
    // <sub>/<sup> digits and signs as Unicode scripts
    [
      'Improvement of magnetic properties of Cr<sup>3+</sup>substituted SrFe<sub>12</sub>O<sub>19</sub>',
      'Improvement of magnetic properties of Cr³⁺substituted SrFe₁₂O₁₉',
    ],
    [
      'New on‐line methods for determining the deuterium/hydrogen composition of water and hydrocarbon gases using O<sup>2–</sup> ion‐conducting solid electrolyte reactor',
      'New on‐line methods for determining the deuterium/hydrogen composition of water and hydrocarbon gases using O²⁻ ion‐conducting solid electrolyte reactor',
    ],
    [
      'Evidence for high temperature and <sup>18</sup>O‐enriched fluids in the Arab‐D of the Ghawar Field, Saudi Arabia',
      'Evidence for high temperature and ¹⁸O‐enriched fluids in the Arab‐D of the Ghawar Field, Saudi Arabia',
    ],
    // a script with no Unicode form (a letter) stays plain text
    [
      'Electrocatalytic CO<sub>2</sub> reduction to CO enabled by Ni-N<sub>x</sub> high activity sites formed by three-dimensional porous foams',
      'Electrocatalytic CO₂ reduction to CO enabled by Ni-Nx high activity sites formed by three-dimensional porous foams',
    ],
    ['Ba<sub>0.5</sub>Sr<sub>0.5</sub>TiO<sub>3</sub> films', 'Ba0.5Sr0.5TiO₃ films'],
    // markup escaped once and twice
    [
      'Theoretical Prediction of MXene-based Single-atom Catalysts M-Ti&lt;sub&gt;2&lt;/sub&gt;CO&lt;sub&gt;2&lt;/sub&gt; (M=Cu, Fe, Co, Ni) Applied in the Electroreduction of CO&lt;sub&gt;2&lt;/sub&gt; for Methanol Production',
      'Theoretical Prediction of MXene-based Single-atom Catalysts M-Ti₂CO₂ (M=Cu, Fe, Co, Ni) Applied in the Electroreduction of CO₂ for Methanol Production',
    ],
    [
      'An Experimental Study of the Effect of Rock/Fluid Interaction on Resistivity Logs during CO&amp;lt;sub&amp;gt;2&amp;lt;/sub&amp;gt; Sequestration in Carbonate Rocks',
      'An Experimental Study of the Effect of Rock/Fluid Interaction on Resistivity Logs during CO₂ Sequestration in Carbonate Rocks',
    ],
    [
      'The occurrence of a shallow-water &amp;lt;i&amp;gt;Ammobaculoides&amp;lt;/i&amp;gt; assemblage in the Middle Jurassic (Bajocian) Dhruma Formation of Central Saudi Arabia',
      'The occurrence of a shallow-water Ammobaculoides assemblage in the Middle Jurassic (Bajocian) Dhruma Formation of Central Saudi Arabia',
    ],
    [
      'The effect of injection well arrangement on CO&lt;SUB align="right"&gt;2 injection into carbonate petroleum reservoir',
      'The effect of injection well arrangement on CO2 injection into carbonate petroleum reservoir',
    ],
    [
      'Ghawar Arab-D Reservoir&lt;subtitle&gt;Widespread Porosity in Shoaling-upward Carbonate Cycles, Saudi Arabia&lt;/subtitle&gt;',
      'Ghawar Arab-D Reservoir: Widespread Porosity in Shoaling-upward Carbonate Cycles, Saudi Arabia',
    ],
    // other tags stripped, their text kept
    [
      'The <i><scp>I</scp>nhibitor of wax 1</i> locus (<i><scp>I</scp>w1</i>) prevents formation of β‐ and <scp>OH</scp>‐β‐diketones',
      'The Inhibitor of wax 1 locus (Iw1) prevents formation of β‐ and OH‐β‐diketones',
    ],
    [
      '<b>Implementation of optimal Galerkin and Collocation approximations of PDEs with Random Coefficients</b>',
      'Implementation of optimal Galerkin and Collocation approximations of PDEs with Random Coefficients',
    ],
    ['<tt>VAMPyR</tt>—A high-level Python library', 'VAMPyR—A high-level Python library'],
    [
      "President's Page: Connecting the world of <i> <u>to</u> </i> near-surface geophysics",
      "President's Page: Connecting the world of to near-surface geophysics",
    ],
    // MathML, whole and cut off by OpenAlex's length limit
    [
      '<mml:math xmlns:mml="http://www.w3.org/1998/Math/MathML"><mml:mi>Q</mml:mi></mml:math>-Gaussian diffusion in stock markets',
      'Q-Gaussian diffusion in stock markets',
    ],
    [
      'Band gap bowing and spectral width of Ga<mml:math xmlns:mml="http://www.w3.org/1998/Math/MathML" display="inline" id="d1e895" altimg="si105.svg"><mml:msub><mml:mrow/><mml:mrow><mml:mrow><mml:mo>(</mml:mo><mml:mn>1</mml:mn><mml:mo>−</mml:mo><mml:mi>x</mml:mi><mml:mo>)</mml:mo></mml:mrow></mml:mrow></mml:msub></mml:math>In<mml:math xmlns:mml="http://www.w3.org/1998/Math/MathML" display="inline" id="d1e912" altimg="si106.svg"><mml:msub><mml:mrow/><mml:mrow><mml:mi>x</mml:mi></mml:mrow></mml:msub></mml:math>N alloys',
      'Band gap bowing and spectral width of Ga(1−x)InxN alloys',
    ],
    [
      'Lattice oxygen evolution in rutile Ru1−xNixO<mml:math xmlns:mml="http://www.w3.org/1998/Math/…',
      'Lattice oxygen evolution in rutile Ru1−xNixO…',
    ],
    [
      'Oxygen evolution reaction kinetics of zinc stannate nanoparticles synthesized via Aloebarbadensi<mml…',
      'Oxygen evolution reaction kinetics of zinc stannate nanoparticles synthesized via Aloebarbadensi…',
    ],
    // entities: named, numeric, Windows-1252 written as C1, twice escaped
    ['Light &amp; Tight in the Empty Quarter', 'Light & Tight in the Empty Quarter'],
    [
      'Volcanic gas plumes&#8217; effects on the spectrum of Venus',
      'Volcanic gas plumes’ effects on the spectrum of Venus',
    ],
    ['Residential Air &#x96; Conditioning Systems', 'Residential Air – Conditioning Systems'],
    ['the Gal&amp;#225;pagos hotspot', 'the Galápagos hotspot'],
    [
      'Predictive uncertainty analysis using null-space Monte Carlo&amp;#160;',
      'Predictive uncertainty analysis using null-space Monte Carlo',
    ],
    // whitespace collapsed
    ['Chemical Abundances in   Spiral Galaxies ', 'Chemical Abundances in Spiral Galaxies'],
    // text that only looks like markup or an entity is kept
    ['Oil&Gas Decarbonization and R&D in the S&P500', 'Oil&Gas Decarbonization and R&D in the S&P500'],
    ['Particles <100 nm and x < y > z', 'Particles <100 nm and x < y > z'],
  ])('%s', (raw, expected) => {
    expect(normaliseTitle(raw)).toBe(expected);
  });

  it('returns a title without markup, entities or odd spaces as it is (the same string)', () => {
    const title = 'Thermal isomerization rates in retinal analogues using Ab‐Initio molecular dynamics';
    expect(normaliseTitle(title)).toBe(title);
    expect(normaliseTitle(null)).toBeNull();
    expect(normaliseTitle('<i> </i>')).toBeNull();
  });

  it('is idempotent', () => {
    for (const raw of ['Fe<sub>3</sub>O<sub>4</sub> &amp; <i>in situ</i>  XRD', 'Cu<sup>2+</sup> (x&lt;0.5)'])
      expect(normaliseTitle(normaliseTitle(raw))).toBe(normaliseTitle(raw));
  });
});

describe('normaliseVenue', () => {
  it('nulls the placeholders OpenAlex writes for an unknown or withdrawn source', () => {
    expect(normaliseVenue('No host')).toBeNull();
    expect(normaliseVenue('Deleted Journal')).toBeNull();
    expect(normaliseVenue('  ')).toBeNull();
    expect(normaliseVenue(null)).toBeNull();
  });
  it('keeps real venues as they are', () => {
    expect(normaliseVenue('ACS Applied Materials & Interfaces')).toBe('ACS Applied Materials & Interfaces');
    expect(normaliseVenue('Meeting abstracts/Meeting abstracts (Electrochemical Society')).toBe(
      'Meeting abstracts/Meeting abstracts (Electrochemical Society',
    );
  });
});

const v = (id: number, title: string, doi: string | null, more: Partial<WorkVersion> = {}): WorkVersion => ({
  id,
  title,
  doi,
  venue: null,
  type: null,
  year: 2024,
  citations: null,
  ...more,
});

describe('versions of one work', () => {
  it('tells preprints by type, DOI and venue', () => {
    expect(isPreprint({ doi: '10.2139/ssrn.4809893', venue: 'No host', type: null })).toBe(true);
    expect(isPreprint({ doi: '10.26434/chemrxiv-2023-8q0qt-v3', venue: null, type: null })).toBe(true);
    expect(isPreprint({ doi: '10.5194/essd-2024-149', venue: null, type: null })).toBe(true);
    expect(isPreprint({ doi: '10.5194/essd-16-2625-2024', venue: null, type: null })).toBe(false);
    expect(isPreprint({ doi: '10.1101/2024.05.30.596646', venue: null, type: null })).toBe(true);
    expect(isPreprint({ doi: '10.1101/gr.278000.123', venue: 'Genome Research', type: 'article' })).toBe(
      false,
    );
    expect(isPreprint({ doi: null, venue: 'arXiv (Cornell University)', type: null })).toBe(true);
    expect(isPreprint({ doi: null, venue: 'Research Square (Research Square)', type: null })).toBe(true);
    expect(isPreprint({ doi: '10.1000/x', venue: 'Journal', type: 'preprint' })).toBe(true);
    expect(
      isPreprint({ doi: '10.1016/j.mtener.2024.101634', venue: 'Materials today energy', type: 'article' }),
    ).toBe(false);
  });

  it('reads the language editions of Angewandte Chemie as one DOI', () => {
    expect(editionKey('10.1002/ange.202405650')).toBe(editionKey('10.1002/anie.202405650'));
    expect(editionKey('10.1002/ange.202405650')).not.toBe(editionKey('10.1002/anie.202405651'));
    expect(editionKey(null)).toBeNull();
  });

  it('keys titles by their letters and digits, markup and case aside', () => {
    expect(
      versionKey('Electronic Structure Tailoring of Cuco2o4 for Boosting Oxygen Evolution Reaction'),
    ).toBe(
      versionKey(
        'Electronic Structure Tailoring of CuCo<sub>2</sub>O<sub>4</sub> for Boosting Oxygen Evolution Reaction',
      ),
    );
    expect(versionKey('[2+1] Cycloadditions Modulate the Hydrophobicity of Ni‐N4')).toBe(
      versionKey('[2+1] Cycloadditions Modulate the Hydrophobicity of Ni-N4'),
    );
  });

  it('shows the journal article over its preprints (sample: SSRN and a Copernicus discussion paper)', () => {
    const title =
      'Oxygen Functionalized Diamond Nanocone Arrays Coupling Cobalt Phthalocyanine for Enhanced CO2 Reduction';
    expect(
      hiddenVersions([
        v(4400016708, title, '10.1016/j.mtener.2024.101634', { venue: 'Materials today energy' }),
        v(4396523545, title, '10.2139/ssrn.4809893', { venue: 'No host' }),
        v(4396523546, title.toUpperCase(), '10.21203/rs.3.rs-1/v1', {
          venue: 'Research Square (Research Square)',
        }),
      ]),
    ).toEqual([4396523545, 4396523546]);
    const indicators =
      'Indicators of Global Climate Change 2023: annual update of key indicators of the state of the climate system';
    expect(
      hiddenVersions([
        v(4396720861, indicators, '10.5194/essd-2024-149'),
        v(4399318659, indicators, '10.5194/essd-16-2625-2024', { venue: 'Earth system science data' }),
      ]),
    ).toEqual([4396720861]);
  });

  it('shows one of two language editions: the more cited, then the lower id', () => {
    const title = 'Converting Carbon Dioxide into Carbon Nanotubes by Reacting with Ethane';
    const ange = v(4396646571, title, '10.1002/ange.202404047', { venue: 'Angewandte Chemie' });
    const anie = v(4396646597, title, '10.1002/anie.202404047', { venue: 'Angewandte Chemie' });
    expect(hiddenVersions([anie, ange])).toEqual([4396646597]);
    expect(
      hiddenVersions([
        { ...anie, citations: 12 },
        { ...ange, citations: 3 },
      ]),
    ).toEqual([4396646571]);
  });

  it('shows one of several postings of a preprint', () => {
    const title = 'Anion effect in electrochemical CO2 reduction: from spectators to orchestrators';
    expect(
      hiddenVersions([
        v(4396869828, title, '10.26434/chemrxiv-2023-8q0qt-v4'),
        v(4396584609, title, '10.26434/chemrxiv-2023-8q0qt-v3'),
      ]),
    ).toEqual([4396869828]);
  });

  it('keeps works that only share a title: generic ones, two journals, years apart', () => {
    expect(
      hiddenVersions([
        v(4396623784, 'Issue Editorial Masthead', '10.1021/csv014i009_1797488'),
        v(4397009268, 'Issue Editorial Masthead', '10.1021/csv014i010_1802933'),
        v(4396922346, 'Reply on RC2', '10.5194/egusphere-2024-436-ac2'),
        v(4401915683, 'Reply on RC2', '10.5194/egusphere-2024-748-ac3'),
      ]),
    ).toEqual([]);
    const ecs =
      'Selectivity Study of Anodic Seawater Electrolysis Catalysts Using the Rotating Ring-Disc Electrode';
    expect(
      hiddenVersions([
        v(4397011969, ecs, '10.1149/11309.0003ecst', { venue: 'ECS transactions' }),
        v(4401697555, ecs, '10.1149/ma2024-01341724mtgabs', { venue: 'Meeting abstracts' }),
      ]),
    ).toEqual([]);
    const title = 'A long enough title about the geology of the Arabian Shield and its basins';
    expect(
      hiddenVersions([
        v(1, title, '10.1000/journal.1', { year: 2012 }),
        v(2, title, '10.2139/ssrn.2', { year: 2020 }),
      ]),
    ).toEqual([]);
  });

  it('answers the same whatever the order of the works', () => {
    const t =
      'Phosphorus-Doped Porous Carbon with Exceptional Electrocatalytic Performance for Oxygen Evolution';
    const works = [
      v(5, t, '10.2139/ssrn.4815163'),
      v(3, t, '10.1016/j.diamond.2024.111373'),
      v(9, t, '10.26434/chemrxiv-2024-x'),
      v(7, 'Converting Carbon Dioxide into Carbon Nanotubes by Reacting with Ethane', '10.1002/anie.1'),
      v(8, 'Converting Carbon Dioxide into Carbon Nanotubes by Reacting with Ethane', '10.1002/ange.1'),
    ];
    const expected = hiddenVersions(works);
    expect(expected).toEqual([5, 8, 9]);
    expect(hiddenVersions([...works].reverse())).toEqual(expected);
  });
});
