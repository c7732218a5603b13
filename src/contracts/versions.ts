import { z } from '@hono/zod-openapi';
import { envelopeShape } from './common.js';

const VersionSchema = z
  .object({
    data_version: z.string().openapi({ description: 'Content hash of the snapshot: pin a read to it' }),
    published_at: z
      .string()
      .nullable()
      .openapi({ description: 'When it (last) became the current version, ISO 8601; null when unknown' }),
    cutoff_date: z
      .string()
      .nullable()
      .openapi({ description: 'Corpus cut-off: the newest publication date the snapshot holds' }),
    works: z.number().int().nullable().openapi({ description: 'Works in the corpus it was scored from' }),
    current: z.boolean().openapi({ description: 'True for the version answers come from by default' }),
  })
  .openapi('DataVersion');

export const VersionsSchema = z
  .object({
    current_version: z.string(),
    versions: z
      .array(VersionSchema)
      .openapi({ description: 'Every kept version, most recently published first' }),
    ...envelopeShape,
  })
  .openapi('DataVersions');
export type VersionsAnswer = z.infer<typeof VersionsSchema>;
