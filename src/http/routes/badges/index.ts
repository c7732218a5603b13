import type { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '../../context.js';
import type { RouteDeps } from '../shared.js';
import { registerElementBadge } from './element.js';
import { registerElementHistoryBadge } from './element-history.js';
import { registerSubjectBadge } from './subject.js';
import { registerSubjectHistoryBadge } from './subject-history.js';

/**
 * The badges to embed (core/badges.ts): reads of /v1 like the others, cached by data version, and
 * taking a feed token in their URL where they need more than no key, as an <img> sends no header.
 */
export function registerBadges(app: OpenAPIHono<AppEnv>, deps: RouteDeps): void {
  registerElementBadge(app, deps);
  registerElementHistoryBadge(app, deps);
  registerSubjectBadge(app, deps);
  registerSubjectHistoryBadge(app, deps);
}
