import type { Context } from 'hono';
import type { Viewer } from '../core/elements.js';

/**
 * The caller as the core sees it. Until keys and plans exist (the REST API issue), every caller
 * is anonymous: HRI is null with its note.
 */
export function viewerOf(_c: Context, publicUrl: string): Viewer {
  return { hriAvailable: false, publicUrl };
}
