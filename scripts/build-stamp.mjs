#!/usr/bin/env node
// Whether dist/ is as new as its sources, so that `npm start` compiles only when it must (a compile
// with nothing to do took about 11 s of a 13 s start). `npm run build` runs `begin` before and `end`
// after (prebuild, postbuild); `npm start` runs `ensure` (prestart), which builds when dist/ is
// missing or a source is newer than the last build that finished.
//   begin:  marks when a build starts (dist/.build-started)
//   end:    that build finished: its start becomes the stamp (dist/.build-stamp), so a source saved
//           while it compiled is newer than the stamp and the next start compiles again
//   ensure: `npm run build` unless every source is older than the stamp
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const started = join(root, 'dist/.build-started');
const stamp = join(root, 'dist/.build-stamp');
// What the build reads: the TypeScript and its settings, the C extension, the dependencies, and the
// build's own scripts. Folders count too: a deleted or renamed file changes its folder's mtime.
const sources = [
  'src',
  'native',
  'tsconfig.json',
  'tsconfig.build.json',
  'package.json',
  'package-lock.json',
  'scripts/build-native.mjs',
  'scripts/build-stamp.mjs',
];

/** The newest mtime under path (the path itself included), or 0 where it does not exist. */
function newest(path) {
  let stat;
  try {
    stat = statSync(path);
  } catch {
    return 0;
  }
  let time = stat.mtimeMs;
  if (stat.isDirectory())
    for (const entry of readdirSync(path)) time = Math.max(time, newest(join(path, entry)));
  return time;
}

function isCurrent() {
  if (!existsSync(join(root, 'dist/cli/main.js')) || !existsSync(stamp)) return false;
  const built = statSync(stamp).mtimeMs;
  return sources.every((source) => newest(join(root, source)) < built);
}

const command = process.argv[2];
if (command === 'begin') {
  mkdirSync(join(root, 'dist'), { recursive: true });
  writeFileSync(started, '');
} else if (command === 'end') {
  if (existsSync(started)) renameSync(started, stamp);
} else if (command === 'ensure') {
  if (!isCurrent()) {
    const npm = process.env.npm_execpath;
    // Under npm, the npm that runs this script; by hand, the one on PATH.
    const build = npm
      ? spawnSync(process.execPath, [npm, 'run', 'build'], { cwd: root, stdio: 'inherit' })
      : spawnSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit' });
    if (build.status !== 0) process.exit(build.status ?? 1);
  }
} else {
  process.stderr.write('usage: node scripts/build-stamp.mjs begin|end|ensure\n');
  process.exit(2);
}
