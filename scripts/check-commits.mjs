#!/usr/bin/env node
// The commit convention (docs/development.md, Commits): a subject of at most 72 characters and a
// body that says why. Run by .ci/run. Checked: every commit after CUTOFF, the last commit made
// before the convention was checked. A fixed commit and not a merge-base because there is no
// remote to compare with, and a branch name (main) says different things in different checkouts;
// the same commits are checked in any clone. Of those, merges are left out (git writes their
// message; the why is in the commits they bring), and so are commits authored before CUTOFF: a
// branch begun before the convention and merged after it brings them.
import { spawnSync } from 'node:child_process';

const CUTOFF = '81a598c092e6ac1969afa2adb0e7afef7911cdc3';
const MAX_SUBJECT = 72;

function git(...args) {
  const run = spawnSync('git', args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (run.error) throw run.error;
  return run;
}

if (git('cat-file', '-e', `${CUTOFF}^{commit}`).status !== 0) {
  process.stderr.write(
    `check-commits: commit ${CUTOFF.slice(0, 12)} is not in this clone; a shallow clone needs \`git fetch --unshallow\`\n`,
  );
  process.exit(1);
}
const cutoffTime = Number(git('log', '-1', '--format=%at', CUTOFF).stdout.trim());
// One record per commit: hash, author time, subject, body, separated by NUL and ended by SOH.
const log = git('log', '--no-merges', '--format=%H%x00%at%x00%s%x00%b%x01', `${CUTOFF}..HEAD`);
if (log.status !== 0) {
  process.stderr.write(log.stderr);
  process.exit(1);
}
const faults = [];
let checked = 0;
for (const record of log.stdout.split('\x01')) {
  if (record.trim() === '') continue;
  const [hash = '', time = '', subject = '', body = ''] = record.replace(/^\n/, '').split('\0');
  if (Number(time) <= cutoffTime) continue;
  checked++;
  const length = [...subject].length;
  if (length > MAX_SUBJECT)
    faults.push(`${hash.slice(0, 12)}: subject of ${length} characters (at most ${MAX_SUBJECT})`);
  if (body.trim() === '')
    faults.push(`${hash.slice(0, 12)}: no body (a paragraph after the subject that says why)`);
}
if (faults.length > 0) {
  process.stderr.write(
    `check-commits: ${faults.length} fault(s) in ${checked} commit(s) since ${CUTOFF.slice(0, 12)}:\n`,
  );
  for (const fault of faults) process.stderr.write(`  ${fault}\n`);
  process.exit(1);
}
process.stdout.write(
  `check-commits: ${checked} commit(s) since ${CUTOFF.slice(0, 12)} follow the convention\n`,
);
