import type { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '../context.js';
import { registerBadges } from './badges/index.js';
import { registerListChanges } from './changes/list.js';
import { registerElementChanges } from './elements/changes.js';
import { registerGetElement } from './elements/get.js';
import { registerElementHistories } from './elements/histories.js';
import { registerElementHistory } from './elements/history.js';
import { registerListElements } from './elements/list.js';
import { registerElementPapers } from './elements/papers.js';
import { registerExports } from './exports/index.js';
import { registerFeeds } from './feeds/index.js';
import { registerLabQuote } from './lab/quote.js';
import { registerLabRun } from './lab/run.js';
import { registerResearch } from './research/get.js';
import type { RouteDeps } from './shared.js';
import { registerSubjectChanges } from './subjects/changes.js';
import { registerSubjectElements } from './subjects/elements.js';
import { registerGetSubject } from './subjects/get.js';
import { registerSubjectHistory } from './subjects/history.js';
import { registerSubjectPapers } from './subjects/papers.js';
import { registerSearchSubjects } from './subjects/search.js';
import { registerVersions } from './versions/get.js';

/**
 * Every /v1 operation of the access table, each from its route file (defineRoute). The batch
 * history is registered before /elements/{symbol}, which would otherwise read "history" as a
 * symbol; research and the lab only in the full edition (the older one answers them 404).
 */
export function registerRoutes(v1: OpenAPIHono<AppEnv>, deps: RouteDeps): void {
  registerListElements(v1, deps);
  registerElementHistories(v1, deps);
  registerGetElement(v1, deps);
  registerElementHistory(v1, deps);
  registerElementPapers(v1, deps);
  registerElementChanges(v1, deps);
  registerSearchSubjects(v1, deps);
  registerGetSubject(v1, deps);
  registerSubjectHistory(v1, deps);
  registerSubjectElements(v1, deps);
  registerSubjectPapers(v1, deps);
  registerSubjectChanges(v1, deps);
  registerVersions(v1, deps);
  registerExports(v1, deps);
  registerListChanges(v1, deps);
  registerFeeds(v1, deps);
  registerBadges(v1, deps);
  if (deps.lab) {
    registerResearch(v1, deps);
    registerLabQuote(v1, deps, deps.lab);
    registerLabRun(v1, deps, deps.lab);
  }
}
