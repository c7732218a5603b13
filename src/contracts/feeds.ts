/**
 * The parameters of the Atom feeds of the changes (core/feeds.ts). A feed answers Atom XML, whose
 * form the Atom standard fixes (RFC 4287), so no answer schema is declared here.
 */
import { z } from '@hono/zod-openapi';
import { KINDS, type Kind } from '../access/policy.js';

/** The subjects a set feed may name. */
export const MAX_FEED_SUBJECTS = 20;

/** token=: the feed token (read and checked before the route, by http/auth.ts). */
export const FeedTokenQuery = {
  token: z.string().optional().openapi({
    description:
      "A feed token (rif_...), made on /account: what a feed of topics or keywords takes, as feed readers send no header. Never an API key. Elements' feeds need none.",
  }),
};

/** subjects=element/Fe,topic/T10074,keyword/...: the set a set feed follows. */
export const FeedSubjectsQuery = z
  .string()
  .transform((text, ctx) => {
    const items = [...new Set(text.split(',').map((s) => s.trim()))].filter((s) => s !== '');
    const subjects: { type: Kind; id: string }[] = [];
    for (const item of items) {
      const at = item.indexOf('/');
      const type = item.slice(0, at) as Kind;
      const id = item.slice(at + 1);
      if (at < 0 || !(KINDS as readonly string[]).includes(type) || id === '' || id.length > 200) {
        ctx.addIssue({
          code: 'custom',
          message: `'${item.slice(0, 60)}' is not kind/id (element/Fe, topic/T10074, keyword/<slug>)`,
        });
        return z.NEVER;
      }
      subjects.push({ type, id });
    }
    if (subjects.length === 0 || subjects.length > MAX_FEED_SUBJECTS) {
      ctx.addIssue({
        code: 'custom',
        message: `expected 1 to ${MAX_FEED_SUBJECTS} subjects, comma-separated`,
      });
      return z.NEVER;
    }
    return subjects;
  })
  .openapi({
    type: 'string',
    example: 'element/Fe,element/Ni,topic/T10074',
    description: `The subjects followed, comma-separated, each kind/id (element/Fe, topic/T10074, keyword/<slug>), 1 to ${MAX_FEED_SUBJECTS}. Topics and keywords make it a feed that takes a feed token.`,
  });

/** kind=: the kind a "rose most" feed follows. */
export const FeedKindQuery = z.enum(KINDS).openapi({
  description: 'element (open), topic or keyword (these take a feed token of the Personal plan)',
});
