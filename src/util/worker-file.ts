import { existsSync } from 'node:fs';
import { sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * A worker thread's file: `name` beside the module at `moduleUrl` once built; when that module
 * runs from source (the tests run src/ directly), its compiled counterpart under dist/.
 */
export function workerFile(moduleUrl: string, name: string): string {
  const here = fileURLToPath(new URL(name, moduleUrl));
  const src = here.lastIndexOf(`${sep}src${sep}`);
  if (existsSync(here) || src < 0) return here;
  return `${here.slice(0, src)}${sep}dist${sep}${here.slice(src + 5)}`;
}
