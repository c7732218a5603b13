import { z } from '@hono/zod-openapi';
import { envelopeShape, HistoryPointSchema, PaperSchema } from '../shared.js';

const SubjectType = z.enum(['topic', 'keyword']);

export const SubjectSchema = z
  .object({
    subject_type: SubjectType,
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

export const SubjectSearchSchema = z
  .object({
    q: z.string(),
    results: z.array(
      z.object({
        subject_type: SubjectType,
        subject_id: z.string(),
        name: z.string(),
        paper_count: z.number().int(),
        match: z.string().openapi({ description: 'Why this subject matched' }),
        canonical_url: z.string().url(),
      }),
    ),
    ...envelopeShape,
  })
  .openapi('SubjectSearch');

export const SubjectHistorySchema = z
  .object({
    subject_type: SubjectType,
    subject_id: z.string(),
    name: z.string(),
    resolution: z.enum(['yearly', 'monthly', 'daily']),
    series: z.array(HistoryPointSchema),
    ...envelopeShape,
  })
  .openapi('SubjectHistory');

export const SubjectElementsSchema = z
  .object({
    subject_type: SubjectType,
    subject_id: z.string(),
    name: z.string(),
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

export const SubjectPapersSchema = z
  .object({
    subject_type: SubjectType,
    subject_id: z.string(),
    name: z.string(),
    sort: z.enum(['impact', 'newest', 'foundational']),
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
