#!/usr/bin/env node
// Records the skill's content hash under its version in skill/manifest.json (one hash per version,
// kept for every version released). Run after editing skill/ and raising `version` in
// skill/SKILL.md's front matter; it refuses to record new content under a version that already
// has other content. A test fails while the content differs from its version's recorded hash.
// Needs a build (npm run build).
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const { SKILL_DIR, skillSources, skillContentHash, frontMatter } = await import('../dist/skill/skill.js');
const path = join(SKILL_DIR, 'manifest.json');
const manifest = existsSync(path) ? JSON.parse(readFileSync(path, 'utf8')) : { versions: {} };
const sources = skillSources();
const version = frontMatter(sources.get('SKILL.md')).version;
const hash = skillContentHash(sources);
const recorded = manifest.versions[version];
if (recorded && recorded !== hash) {
  console.error(
    `skill/ changed but its version is still ${version}: raise version in skill/SKILL.md, then run this again`,
  );
  process.exit(1);
}
manifest.versions[version] = hash;
writeFileSync(path, `${JSON.stringify(manifest, null, 2)}\n`);
console.log(`skill/manifest.json: ${version} = ${hash.slice(0, 12)}`);
