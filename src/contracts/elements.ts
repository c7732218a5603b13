import { z } from '@hono/zod-openapi';
import {
  envelopeShape,
  HistoryPointSchema,
  historyShape,
  paperListShape,
  ResolutionSchema,
} from './common.js';

export const ElementScoreSchema = z
  .object({
    symbol: z.string().openapi({ example: 'Fe' }),
    name: z.string().openapi({ example: 'Iron' }),
    atomic_number: z.number().int(),
    group: z.number().int().nullable(),
    period: z.number().int(),
    ri: z.number().openapi({
      description: 'Research intensity: fractional papers per 10,000 corpus papers, last 12 months',
    }),
    ris: z.number().openapi({ description: 'Research intensity score, 0-100, log scale, recency-weighted' }),
    hri: z
      .number()
      .nullable()
      .openapi({ description: 'High-impact research intensity; null below the Personal plan' }),
    paper_count: z.number().int(),
    canonical_url: z.string().url(),
  })
  .openapi('ElementScore');
export type ElementScore = z.infer<typeof ElementScoreSchema>;

export const ElementSchema = ElementScoreSchema.extend(envelopeShape).openapi('Element');
export type ElementAnswer = z.infer<typeof ElementSchema>;

export const ElementListSchema = z
  .object({ elements: z.array(ElementScoreSchema), count: z.number().int(), ...envelopeShape })
  .openapi('ElementList');
export type ElementListAnswer = z.infer<typeof ElementListSchema>;

export const ElementHistorySchema = z
  .object({ symbol: z.string(), ...historyShape, ...envelopeShape })
  .openapi('ElementHistory');
export type ElementHistoryAnswer = z.infer<typeof ElementHistorySchema>;

export const ElementHistoriesSchema = z
  .object({
    resolution: ResolutionSchema,
    count: z.number().int(),
    histories: z.array(z.object({ symbol: z.string(), series: z.array(HistoryPointSchema) })),
    ...envelopeShape,
  })
  .openapi('ElementHistories');
export type ElementHistoriesAnswer = z.infer<typeof ElementHistoriesSchema>;

export const ElementPapersSchema = z
  .object({ symbol: z.string(), keyword: z.string().nullable(), ...paperListShape, ...envelopeShape })
  .openapi('ElementPapers');
export type ElementPapersAnswer = z.infer<typeof ElementPapersSchema>;
