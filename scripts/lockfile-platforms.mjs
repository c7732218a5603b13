#!/usr/bin/env node
// The registry this project installs from does not serve every platform build of Biome and
// DuckDB (darwin, win32, android, musl). `npm install` then leaves them out of package-lock.json,
// and `npm ci` refuses the lock as "missing" them. This adds a lock entry for each such optional
// package with its os/cpu (and libc), so `npm ci` accepts the lock and skips them by platform,
// without fetching. Run after changing dependencies: node scripts/lockfile-platforms.mjs
import { readFileSync, writeFileSync } from 'node:fs';

const path = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(path, 'utf8'));
const packages = lock.packages;
const PLATFORM = /-(android|darwin|linux|win32)-(arm64|x64|amd64)(-musl)?$/;
let added = 0;
for (const entry of Object.values(packages)) {
  for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const key = `node_modules/${name}`;
    const m = PLATFORM.exec(name);
    if (packages[key] || !m) continue;
    packages[key] = {
      version,
      cpu: [m[2] === 'amd64' ? 'x64' : m[2]],
      optional: true,
      os: [m[1]],
      ...(m[3] ? { libc: ['musl'] } : {}),
    };
    added++;
  }
}
lock.packages = Object.fromEntries(
  Object.entries(packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b))),
);
writeFileSync(path, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`lockfile-platforms: ${added} platform entries added`);
