import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { zipSync } from 'fflate';
import { PACKAGE_ROOT } from '../config/paths.js';

/**
 * The downloadable agent skill (Agent Skills layout: SKILL.md with front matter, and reference
 * files), built from `skill/` in the repository. The files name the server as {{PUBLIC_URL}},
 * filled in when served, so every link and example in them answers on this server.
 */
export const SKILL_DIR = join(PACKAGE_ROOT, 'skill');
const NAME = 'research-intensity';

export interface Skill {
  version: string;
  /** Path inside the skill folder -> text, with PUBLIC_URL filled in. */
  files: Map<string, string>;
  zip: Uint8Array;
}

/** The skill's source files (the manifest aside), by path, as in the repository. */
export function skillSources(dir = SKILL_DIR): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (d: string) => {
    for (const entry of readdirSync(d, { withFileTypes: true }).sort((a, b) =>
      a.name.localeCompare(b.name),
    )) {
      const path = join(d, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name !== 'manifest.json') files.set(relative(dir, path), readFileSync(path, 'utf8'));
    }
  };
  walk(dir);
  return files;
}

/** A hash of the skill's content: the manifest records it beside the version, so a test can tell a change without a new version. */
export function skillContentHash(sources: Map<string, string>): string {
  const hash = createHash('sha256');
  for (const [path, text] of sources) hash.update(`${path}\0${text}\0`);
  return hash.digest('hex');
}

/** The `version` of SKILL.md's front matter. */
export function frontMatter(skillMd: string): Record<string, string> {
  const m = /^---\n([\s\S]*?)\n---\n/.exec(skillMd);
  if (!m) throw new Error('SKILL.md has no front matter');
  return Object.fromEntries(
    m[1]!
      .split('\n')
      .map((line) => /^([a-z_]+):\s*(.*)$/.exec(line))
      .filter((x): x is RegExpExecArray => x !== null)
      .map((x) => [x[1]!, x[2]!.trim()]),
  );
}

export function buildSkill(publicUrl: string, dir = SKILL_DIR): Skill {
  const files = new Map<string, string>();
  for (const [path, text] of skillSources(dir)) files.set(path, text.replaceAll('{{PUBLIC_URL}}', publicUrl));
  const version = frontMatter(files.get('SKILL.md') ?? '').version;
  if (!version) throw new Error('SKILL.md front matter has no version');
  const entries: Record<string, Uint8Array> = {};
  // A fixed time in the archive, so the same skill gives the same bytes.
  for (const [path, text] of files) entries[`${NAME}/${path}`] = new TextEncoder().encode(text);
  const zip = zipSync(
    Object.fromEntries(
      Object.entries(entries).map(([p, b]) => [p, [b, { mtime: new Date('2026-01-01T00:00:00Z') }]]),
    ),
  );
  return { version, files, zip };
}
