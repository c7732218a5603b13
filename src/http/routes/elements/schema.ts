import { z } from '@hono/zod-openapi';

export const NotesSchema = z
  .object({ ri: z.string(), ris: z.string(), hri: z.string(), data: z.string() })
  .openapi('Notes', { description: 'How each metric should and should not be read.' });

export const ElementScoreSchema = z
  .object({
    symbol: z.string().openapi({ example: 'Fe' }),
    name: z.string().openapi({ example: 'Iron' }),
    atomic_number: z.number().int(),
    group: z.number().int().nullable(),
    period: z.number().int(),
    ri: z.number().openapi({
      description: 'Research intensity: fractional papers per 10,000 corpus papers, last 12 months.',
    }),
    ris: z.number().openapi({ description: 'Research intensity score, 0-100, log scale, recency-weighted.' }),
    hri: z
      .number()
      .nullable()
      .openapi({ description: 'High-impact research intensity; null below the Personal plan.' }),
    paper_count: z.number().int(),
    canonical_url: z.string().url(),
  })
  .openapi('ElementScore');

export const ElementSchema = ElementScoreSchema.extend({
  notes: NotesSchema,
  data_version: z.string(),
}).openapi('Element');

export const ElementListSchema = z
  .object({
    elements: z.array(ElementScoreSchema),
    count: z.number().int(),
    canonical_url: z.string().url(),
    notes: NotesSchema,
    data_version: z.string(),
  })
  .openapi('ElementList');

export const ProblemSchema = z
  .object({
    type: z.string(),
    title: z.string(),
    status: z.number().int(),
    detail: z.string(),
    code: z.string(),
    instance: z.string().optional(),
    request_id: z.string().optional(),
  })
  .passthrough()
  .openapi('Problem');

export const problem = (description: string) => ({
  description,
  content: { 'application/problem+json': { schema: ProblemSchema } },
});
