import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { zipSync } from 'fflate';
import { editionText } from '../access/edition-text.js';
import type { Edition } from '../access/policy.js';
import { PACKAGE_ROOT } from '../config/paths.js';

/**
 * The downloadable agent skill (Agent Skills layout: SKILL.md with front matter, and reference
 * files), built from `skill/` in the repository. The files name the server as {{PUBLIC_URL}},
 * filled in when served, so every link and example in them answers on this server, and the
 * skill's version as {{VERSION}}. They are written for both editions: what only one edition
 * serves is between {{#full}} and {{/full}} (or {{#enterprise}} and {{/enterprise}}), and the
 * rest is worded for the edition served (editionText: the older one's plan is Enterprise).
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

/** A source text as an edition serves it: that edition's sections kept, the other's left out. */
function skillText(text: string, edition: Edition): string {
  // A section opened at the end of a line closes at the end of one, its marker lines dropped whole.
  const kept = text.replace(
    /\{\{#(full|enterprise)\}\}(\n?)([\s\S]*?)\{\{\/\1\}\}\2/g,
    (_all, which: string, _newline: string, body: string) => (which === edition ? body : ''),
  );
  return editionText(kept, edition);
}

/**
 * The skill an edition serves. Its version is the front matter's; the older edition's skill says
 * other things, so its version carries +enterprise (semver build metadata: the same release, and
 * the version /v1/skill/version gives there).
 */
export function buildSkill(publicUrl: string, edition: Edition = 'full', dir = SKILL_DIR): Skill {
  const sources = skillSources(dir);
  const released = frontMatter(sources.get('SKILL.md') ?? '').version;
  if (!released) throw new Error('SKILL.md front matter has no version');
  const version = edition === 'full' ? released : `${released}+${edition}`;
  const files = new Map<string, string>();
  for (const [path, source] of sources) {
    const text = skillText(source, edition)
      .replaceAll('{{PUBLIC_URL}}', publicUrl)
      .replaceAll('{{VERSION}}', version);
    // The front matter names the version served.
    files.set(path, path === 'SKILL.md' ? text.replace(/^version: .*$/m, `version: ${version}`) : text);
  }
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
