import { z } from '@hono/zod-openapi';
import { envelopeShape, historyShape, PaperSchema, PaperSortSchema } from './common.js';

export const SubjectTypeSchema = z.enum(['topic', 'keyword']);
export type SubjectType = z.infer<typeof SubjectTypeSchema>;

export const SubjectSchema = z
  .object({
    subject_type: SubjectTypeSchema,
    subject_id: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    ri: z.number(),
    ris: z.number(),
    hri: z.number().nullable(),
    paper_count: z.number().int(),
    field: z.string().nullable().optional(),
    subfield: z.string().nullable().optional(),
    domain: z.string().nullable().optional(),
    ...envelopeShape,
  })
  .openapi('Subject');
export type SubjectAnswer = z.infer<typeof SubjectSchema>;

const SearchCandidateSchema = z.object({
  subject_type: SubjectTypeSchema,
  subject_id: z.string(),
  name: z.string(),
  paper_count: z.number().int(),
  match: z.string().openapi({ description: 'Why this subject matched' }),
  canonical_url: z.string().url(),
});

export const SubjectSearchSchema = z
  .object({ q: z.string(), results: z.array(SearchCandidateSchema), ...envelopeShape })
  .openapi('SubjectSearch');
export type SubjectSearchAnswer = z.infer<typeof SubjectSearchSchema>;

/** Which subject an answer is about. */
const subjectShape = { subject_type: SubjectTypeSchema, subject_id: z.string(), name: z.string() };

export const SubjectHistorySchema = z
  .object({ ...subjectShape, ...historyShape, ...envelopeShape })
  .openapi('SubjectHistory');
export type SubjectHistoryAnswer = z.infer<typeof SubjectHistorySchema>;

export const SubjectElementsSchema = z
  .object({
    ...subjectShape,
    elements: z.array(
      z.object({
        rank: z.number().int(),
        symbol: z.string(),
        name: z.string(),
        share: z.number(),
        canonical_url: z.string().url(),
      }),
    ),
    ...envelopeShape,
  })
  .openapi('SubjectElements');
export type SubjectElementsAnswer = z.infer<typeof SubjectElementsSchema>;

export const SubjectPapersSchema = z
  .object({
    ...subjectShape,
    sort: PaperSortSchema,
    limit: z.number().int(),
    total_ranked: z.number().int(),
    total_papers: z
      .number()
      .int()
      .optional()
      .openapi({ description: 'Topics only: how many papers the topic has' }),
    papers: z.array(PaperSchema),
    ...envelopeShape,
  })
  .openapi('SubjectPapers');
export type SubjectPapersAnswer = z.infer<typeof SubjectPapersSchema>;
