/**
 * What moved per subject at each publication (the changes a snapshot holds: snapshot/schema.ts),
 * the answers and the parameters REST's changes routes and MCP's get_changes take.
 */
import { z } from '@hono/zod-openapi';
import { KINDS, type Kind } from '../access/policy.js';
import { envelopeShape } from './common.js';
import { DATA_VERSION, DATA_VERSION_FORM } from './data-version.js';
import { integerParam } from './params.js';

/** A kind of subject: an element, a topic or a keyword. */
const KindSchema = z.enum(KINDS);

/** The most changes one answer lists, and how many unless told. */
const MAX_CHANGES_LIMIT = 1_000;
const DEFAULT_CHANGES_LIMIT = 100;

/**
 * kind=element,topic: the kinds of subject listed, comma-separated (every kind unless told). The
 * plan a call needs is that of the kinds asked for: topics and keywords from Personal.
 */
export const KindsQuery = z.string().default(KINDS.join(',')).transform(parseKinds).openapi({
  type: 'string',
  example: 'element,topic',
  description:
    'The kinds of subject listed, comma-separated: element, topic, keyword (default all three). Topics and keywords need the Personal plan; kind=element any key.',
});

/**
 * kind as get_changes takes it: absent when not given, since one subject's changes take no kind
 * (the list then takes every kind, as KindsQuery's default).
 */
export const KindsArg = z.string().transform(parseKinds).optional();

function parseKinds(text: string, ctx: z.core.$RefinementCtx<string>): Kind[] {
  const kinds = [...new Set(text.split(',').map((k) => k.trim().toLowerCase()))];
  const bad = kinds.filter((k) => !(KINDS as readonly string[]).includes(k));
  if (bad.length > 0 || kinds.length === 0) {
    ctx.addIssue({ code: 'custom', message: `expected kinds from ${KINDS.join(', ')}, comma-separated` });
    return z.NEVER;
  }
  return KINDS.filter((k) => kinds.includes(k));
}

/**
 * A number of RIS points, 0-100, in decimal digits from a query string or a JSON number: the least
 * move of the changes reads and of a webhook subscription.
 */
export const RisPoints = z.preprocess(
  (v) => (typeof v === 'string' && /^\d+(\.\d+)?$/.test(v) ? Number(v) : v),
  z
    .number({ error: 'expected a number of RIS points from 0 to 100, in decimal digits' })
    .min(0, { error: 'expected a number of RIS points from 0 to 100' })
    .max(100, { error: 'expected a number of RIS points from 0 to 100' })
    .default(0),
);

/** The parameters every changes read takes (the list adds kind). */
export const ChangesQuery = {
  since: z
    .string()
    .regex(DATA_VERSION, `must be a data_version: ${DATA_VERSION_FORM}, as in an answer`)
    .optional()
    .openapi({
      description:
        "The changes of every publication after this data version (an earlier answer's data_version), up to the one answering. Without it: the list, the last publication's; one subject's, every publication the answering version holds (up to 30).",
    }),
  min_move: RisPoints.openapi({
    type: 'number',
    example: 5,
    description:
      'Only moves of at least this many RIS points (0-100; default 0). A subject new or gone, or a community turning rising or no longer rising, is listed whatever its move.',
  }),
  direction: z.enum(['up', 'down']).optional().openapi({
    description:
      'up: RIS rose, a new subject, or a community turning rising; down: RIS fell, a subject gone, or a community no longer rising',
  }),
  limit: integerParam(1, MAX_CHANGES_LIMIT, DEFAULT_CHANGES_LIMIT).openapi({
    description: `Changes to list, 1-${MAX_CHANGES_LIMIT} (default ${DEFAULT_CHANGES_LIMIT}): the newest publication first, then the largest moves; total counts all that match`,
  }),
};

const BeforeAfter = <T extends z.ZodType>(value: T) => z.object({ before: value, after: value });

const ChangeSchema = z
  .object({
    subject_type: KindSchema,
    subject_id: z.string().openapi({ description: 'The element symbol, topic id or keyword slug' }),
    name: z.string(),
    data_version: z.string().openapi({ description: 'The publication this change came with' }),
    since: z
      .string()
      .openapi({ description: 'The data version it was compared with (the one published before)' }),
    change: z.enum(['new', 'gone', 'moved']).openapi({
      description:
        'new: not in the corpus before (no values before); gone: no longer in it (no values after)',
    }),
    direction: z.enum(['up', 'down', 'none']),
    move: z.number().openapi({ description: 'RIS after minus RIS before (0 for a side that is missing)' }),
    ri: BeforeAfter(z.number().nullable()),
    ris: BeforeAfter(z.number().nullable()),
    hri: BeforeAfter(z.number().nullable()).openapi({ description: 'null below the Personal plan' }),
    rank: BeforeAfter(z.number().int().nullable()).openapi({
      description: 'Rank among subjects of its kind by RIS (1 + those higher)',
    }),
    rising: BeforeAfter(z.boolean().nullable()).openapi({
      description: "A topic's research community rising; null for elements and keywords",
    }),
    canonical_url: z.string().url(),
  })
  .openapi('Change');
export type ChangeEntry = z.infer<typeof ChangeSchema>;

const PublicationSchema = z.object({
  data_version: z.string(),
  since: z.string().openapi({ description: 'The data version it was compared with' }),
  changes: z.number().int().openapi({ description: 'Subjects that moved in it, of every kind' }),
});

/** What every changes answer holds. */
const changesShape = {
  since: z.string().nullable().openapi({ description: 'since as asked (null: not given)' }),
  publications: z.array(PublicationSchema).openapi({
    description: 'The publications the answer covers, newest first (empty when none came after since)',
  }),
  min_move: z.number(),
  direction: z.enum(['up', 'down']).nullable(),
  limit: z.number().int(),
  total: z.number().int().openapi({ description: 'Changes that match, of which the first limit are listed' }),
  changes: z.array(ChangeSchema),
};

export const ChangesSchema = z
  .object({ kind: z.array(KindSchema), ...changesShape, ...envelopeShape })
  .openapi('Changes');
export type ChangesAnswer = z.infer<typeof ChangesSchema>;

export const SubjectChangesSchema = z
  .object({
    subject_type: KindSchema,
    subject_id: z.string(),
    name: z.string(),
    ...changesShape,
    ...envelopeShape,
  })
  .openapi('SubjectChanges');
export type SubjectChangesAnswer = z.infer<typeof SubjectChangesSchema>;
