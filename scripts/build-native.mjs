#!/usr/bin/env node
// Builds the project's SQLite extensions (native/page-checksums.c, native/release-memory.c), each
// into its own library in dist/native/, against the SQLite that better-sqlite3 bundles (its
// sqlite3ext.h): run by `npm run build`, so by `npm ci`'s prepare step on a fresh clone. A library
// newer than its sources is skipped. Needs a C compiler (`cc`, or CC): without one it fails with
// what to install.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const sources = ['page-checksums', 'release-memory'];
const suffix = { darwin: 'dylib', win32: 'dll' }[process.platform] ?? 'so';

const fail = (message) => {
  process.stderr.write(`build-native: ${message}\n`);
  process.exit(1);
};

if (process.platform === 'win32')
  fail('the SQLite extensions are built with a Unix C compiler; Windows is not supported');
let include;
try {
  include = join(
    dirname(createRequire(import.meta.url).resolve('better-sqlite3/package.json')),
    'deps/sqlite3',
  );
} catch {
  fail('better-sqlite3 is not installed: run `npm ci` first');
}
const header = join(include, 'sqlite3ext.h');
if (!existsSync(header))
  fail(`${header} is missing: the extension is compiled against better-sqlite3's SQLite`);

const mtime = (p) => statSync(p).mtimeMs;
const cc = process.env.CC?.trim() || 'cc';
for (const name of sources)
  build(join(root, `native/${name}.c`), join(root, `dist/native/${name}.${suffix}`));

/** Compiles one extension, unless its library is newer than its source, the header and this script. */
function build(source, out) {
  if (existsSync(out) && mtime(out) > Math.max(mtime(source), mtime(header), mtime(import.meta.filename)))
    return;
  mkdirSync(dirname(out), { recursive: true });
  const partial = `${out}.${process.pid}`;
  const args = [
    '-std=c11',
    '-O2',
    '-fPIC',
    '-fvisibility=hidden',
    '-Wall',
    '-Wextra',
    process.platform === 'darwin' ? '-dynamiclib' : '-shared',
    `-I${include}`,
    source,
    '-o',
    partial,
  ];
  const built = spawnSync(cc, args, { stdio: ['ignore', 'inherit', 'inherit'] });
  if (built.error?.code === 'ENOENT')
    fail(
      `no C compiler: \`${cc}\` was not found. The SQLite extensions (native/*.c) need one: ` +
        'install gcc (Debian/Ubuntu: apt-get install gcc; macOS: xcode-select --install) ' +
        'or set CC to a C compiler.',
    );
  if (built.error) fail(`cannot run \`${cc}\`: ${built.error.message}`);
  if (built.status !== 0) {
    rmSync(partial, { force: true });
    fail(`\`${cc} ${args.join(' ')}\` failed (exit ${built.status})`);
  }
  // Renamed into place: a server loading the library never reads a half-written one.
  renameSync(partial, out);
}
