#!/usr/bin/env node
// Where a batch job's memory peaks: runs one `ri` command (ingest, build, update...) as its own
// process, samples its resident set every SAMPLE_MS (default 500) from /proc, and prints each line
// of the command's log with the RSS at that moment and the highest RSS since the line before, then
// the peak and when it came. Linux only (/proc/PID/status).
//   node bench/rss-trace.mjs build --data-dir /var/tmp/ri-bench/data-1000000 --full
// RI_CLI picks another compiled CLI (default: this checkout's dist/cli/main.js).
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';

const root = resolve(import.meta.dirname, '..');
const cli = resolve(process.env.RI_CLI ?? join(root, 'dist/cli/main.js'));
const sampleMs = Number(process.env.SAMPLE_MS ?? 500);
const args = process.argv.slice(2);
if (args.length === 0) throw new Error('usage: node bench/rss-trace.mjs RI_COMMAND [ARGS...]');

const started = performance.now();
const seconds = () => (performance.now() - started) / 1000;
const child = spawn(process.execPath, [cli, ...args], { stdio: ['ignore', 'inherit', 'pipe'] });

/** The child's resident set in MB, or null once it has gone. */
function rssMb() {
  try {
    const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
    const kb = /VmRSS:\s+(\d+) kB/.exec(status);
    return kb ? Number(kb[1]) / 1024 : null;
  } catch {
    return null;
  }
}

let peak = { mb: 0, at: 0 };
let sinceLine = 0;
const sample = () => {
  const mb = rssMb();
  if (mb === null) return 0;
  sinceLine = Math.max(sinceLine, mb);
  if (mb > peak.mb) peak = { mb, at: seconds() };
  return mb;
};
const timer = setInterval(sample, sampleMs);

createInterface({ input: child.stderr }).on('line', (line) => {
  const now = sample();
  const row = `${seconds().toFixed(1).padStart(7)} s ${Math.round(now).toString().padStart(6)} MB (max since ${Math.round(sinceLine).toString().padStart(6)})  ${line}`;
  process.stderr.write(`${row}\n`);
  sinceLine = now;
});

const code = await new Promise((done) => child.once('exit', (c) => done(c ?? 1)));
clearInterval(timer);
process.stderr.write(
  `peak ${Math.round(peak.mb)} MB at ${peak.at.toFixed(1)} s of ${seconds().toFixed(1)} s (exit ${code})\n`,
);
console.log(
  JSON.stringify({
    command: args.join(' '),
    peak_rss_mb: Math.round(peak.mb),
    peak_at_s: +peak.at.toFixed(1),
    seconds: +seconds().toFixed(1),
    exit: code,
  }),
);
process.exitCode = code;
