/**
 * The answers' shapes, declared once: the OpenAPI document and the 200 checks read these zod
 * schemas (src/http), the MCP tools declare them as output, and the core's answer types are
 * inferred from them (`z.infer`, imported as types only), so an answer and its contract cannot
 * drift. The request parameters are here too (params.ts, queries.ts, and an area's beside its
 * answers). This folder imports nothing of the service but the access table, the lab query's
 * length and the leaves (scoring/resolutions.ts, data-version.ts).
 */
import { z } from '@hono/zod-openapi';
import { RESOLUTIONS } from '../scoring/resolutions.js';

const NotesSchema = z
  .object({
    ri: z.string(),
    ris: z.string(),
    hri: z.string(),
    data: z.string(),
    /** How to cite the answer so that anyone can ask for the same one again. */
    cite: z.string().openapi({ description: 'How to cite this answer: canonical_url and data_version' }),
    /** Paper lists: how rank, impact_score and ris_contribution should be read. */
    papers: z.string().optional(),
    /** History: what a period holds and why some are missing. */
    history: z.string().optional(),
    /** Research: how many communities have evidence, and what makes one named. */
    communities: z.string().optional().openapi({
      description: 'Research: how many communities have evidence for the question, and which are named',
    }),
    /** Changes: what a move is and how to read it across publications. */
    changes: z.string().optional().openapi({
      description: 'Changes: what moved between which publications, and how a move of RIS is read',
    }),
    /** The lab: what a match is, the sample, the licence threshold. */
    lab: z.string().optional(),
    /** Why a list in this answer is empty (a research lens, a filtered paper list, lab broader). */
    empty: z.string().optional().openapi({ description: 'Why a list in this answer is empty' }),
    /** An MCP result held to its size (a history, a paper list, a lab run): what it leaves out and how to get it. */
    left_out: z.string().optional().openapi({
      description:
        "MCP results only: what is left out to hold the result to its size (a history's older periods, the last papers of a paper list or a lab run), the arguments that get them where there are some, and the URL of the whole answer",
    }),
  })
  .openapi('Notes', { description: 'How each metric should and should not be read, for this data.' });
export type Notes = z.infer<typeof NotesSchema>;

/** canonical_url, notes, data_version: on every successful answer. */
export const envelopeShape = {
  canonical_url: z.string().url().openapi({ description: 'Web page to cite for attribution' }),
  notes: NotesSchema,
  data_version: z.string().openapi({ description: 'Content hash of the snapshot the answer comes from' }),
};
const EnvelopeSchema = z.object(envelopeShape);
export type Envelope = z.infer<typeof EnvelopeSchema>;

/** A history resolution (which plan may ask for which: RESOLUTION_ACCESS). */
export const ResolutionSchema = z.enum(RESOLUTIONS);

export const HistoryPointSchema = z.object({
  period: z.string(),
  ri: z.number(),
  ris: z.number(),
  hri: z.number().nullable(),
  papers: z.number().int(),
});
export type HistoryPoint = z.infer<typeof HistoryPointSchema>;

/** What every history answer holds (an element's, a subject's). */
export const historyShape = {
  resolution: ResolutionSchema,
  series: z.array(HistoryPointSchema),
};

export const PaperSortSchema = z.enum(['impact', 'newest', 'foundational']);
export type PaperSort = z.infer<typeof PaperSortSchema>;

export const PaperSchema = z
  .object({
    title: z.string().nullable(),
    doi: z.string().nullable(),
    openalex_id: z.string().openapi({
      description: 'The OpenAlex work id (W2741809807): joins any paper back to OpenAlex, with a DOI or not',
    }),
    venue: z.string().nullable(),
    year: z.number().int().nullable(),
    citations: z
      .number()
      .int()
      .nullable()
      .openapi({ description: 'null when the source has no citation data' }),
    link: z.string().url(),
    impact_score: z.number().nullable(),
    citation_percentile: z.number().nullable(),
    /** The paper's research community: a topic id (its primary topic, or one found by citations). */
    cluster: z.string().nullable(),
    cluster_name: z.string().nullable(),
    rank: z.number().int(),
    ris_contribution: z
      .number()
      .openapi({ description: 'Weight toward the RIS; NOT importance; do not sort by it' }),
    publication_date: z.string().nullable(),
    elements: z.array(z.string()),
    keywords: z.array(z.string()),
  })
  .openapi('Paper');
export type PaperEntry = z.infer<typeof PaperSchema>;

/** What every ranked paper list holds (an element's, a subject's). */
export const paperListShape = {
  sort: PaperSortSchema,
  limit: z.number().int(),
  total_ranked: z.number().int().openapi({
    description:
      "How many ranked papers the list reaches (at most 100); with an element's keyword filter, those that have the keyword",
  }),
  papers: z.array(PaperSchema),
};

export const UsdSchema = z.object({ usd: z.number(), currency: z.literal('USD') });
export type Usd = z.infer<typeof UsdSchema>;
