/**
 * The parameters of the badges to embed (core/badges.ts). A badge answers SVG, an image, so no
 * answer schema is declared here.
 */
import { z } from '@hono/zod-openapi';
import { SubjectTypeSchema } from './subjects.js';

/** token=: a feed token, read and checked before the route (http/auth.ts), as the feeds take it. */
export const BadgeTokenQuery = {
  token: z.string().optional().openapi({
    description:
      'A feed token (rif_...), made on /account: what a badge of a topic or keyword, or a sparkline, takes, as an <img> tag sends no header. Never an API key. An element badge needs none.',
  }),
};

const SVG = '.svg';

/**
 * A path segment that ends in .svg ({symbol}.svg): the router hands it over whole
 * (routes/define-route.ts), and the parameter is what stands before the suffix.
 */
const beforeSvg = (description: string, example: string, max: number) =>
  z
    .string()
    .min(SVG.length + 1)
    .max(max + SVG.length)
    .transform((segment) => segment.slice(0, -SVG.length))
    .openapi({ type: 'string', example, description });

export const SymbolSvgParam = z.object({
  symbol: beforeSvg('Chemical symbol, any case (the path ends in .svg)', 'Fe', 40).openapi({
    param: { name: 'symbol', in: 'path' },
  }),
});

export const SubjectSvgParams = z.object({
  subject_type: SubjectTypeSchema.openapi({ param: { name: 'subject_type', in: 'path' }, example: 'topic' }),
  subject_id: beforeSvg(
    'OpenAlex topic id (T10030) or keyword slug (the path ends in .svg)',
    'T10030',
    200,
  ).openapi({ param: { name: 'subject_id', in: 'path' } }),
});
