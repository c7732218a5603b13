import { z } from '@hono/zod-openapi';
import { envelopeShape, HistoryPointSchema, PaperSchema } from '../shared.js';

/** A batch: comma-separated symbols, any case; each element once, in the order given. */
export const SymbolsQuery = z
  .string()
  .min(1)
  .max(1000)
  .openapi({ example: 'Fe,Ni,Co', description: 'Comma-separated element symbols, any case (Fe,ni,CO)' });

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

export const ElementSchema = ElementScoreSchema.extend(envelopeShape).openapi('Element');

export const ElementListSchema = z
  .object({ elements: z.array(ElementScoreSchema), count: z.number().int(), ...envelopeShape })
  .openapi('ElementList');

export const ElementHistorySchema = z
  .object({
    symbol: z.string(),
    resolution: z.enum(['yearly', 'monthly', 'daily']),
    series: z.array(HistoryPointSchema),
    ...envelopeShape,
  })
  .openapi('ElementHistory');

export const ElementHistoriesSchema = z
  .object({
    resolution: z.enum(['yearly', 'monthly', 'daily']),
    count: z.number().int(),
    histories: z.array(z.object({ symbol: z.string(), series: z.array(HistoryPointSchema) })),
    ...envelopeShape,
  })
  .openapi('ElementHistories');

export const ElementPapersSchema = z
  .object({
    symbol: z.string(),
    keyword: z.string().nullable(),
    sort: z.enum(['impact', 'newest', 'foundational']),
    limit: z.number().int(),
    total_ranked: z.number().int(),
    papers: z.array(PaperSchema),
    ...envelopeShape,
  })
  .openapi('ElementPapers');
