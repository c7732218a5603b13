import type { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '../../context.js';
import type { RouteDeps } from '../shared.js';
import { registerElementFeed } from './element.js';
import { registerRisingFeed } from './rising.js';
import { registerSubjectSetFeed } from './set.js';
import { registerSubjectFeed } from './subject.js';

/** The Atom feeds of the changes (core/feeds.ts): reads of /v1 like the others, cached by data version. */
export function registerFeeds(app: OpenAPIHono<AppEnv>, deps: RouteDeps): void {
  registerElementFeed(app, deps);
  registerSubjectSetFeed(app, deps);
  registerSubjectFeed(app, deps);
  registerRisingFeed(app, deps);
}
