import type { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '../../context.js';
import type { RouteDeps } from '../shared.js';
import { registerExportFile } from './file.js';
import { registerListExports } from './list.js';

/** The whole-table exports: the list, and each file (docs/exports.md). */
export function registerExports(app: OpenAPIHono<AppEnv>, deps: RouteDeps): void {
  registerListExports(app, deps);
  registerExportFile(app, deps);
}
