import cliProgress from 'cli-progress';
import type { IngestProgress } from '../ingest/ingest.js';

/**
 * A progress bar on a terminal; plain log lines (at most one every 5 s) otherwise. `names` lets
 * `ri pull` say pages where ingest says files.
 */
export function ingestProgressReporter(
  stream: NodeJS.WriteStream = process.stderr,
  names: { command: string; parts: string } = { command: 'ingest', parts: 'files' },
) {
  if (stream.isTTY) {
    const bar = new cliProgress.SingleBar(
      {
        stream,
        format: `${names.command} [{bar}] {percentage}% | {read} works | ${names.parts} {filesDone}/{files} | {rate} works/s | eta {eta_formatted}`,
        hideCursor: true,
      },
      cliProgress.Presets.shades_classic,
    );
    let started = false;
    const t0 = performance.now();
    return {
      update(p: IngestProgress) {
        const payload = { read: p.read, filesDone: p.filesDone, files: p.files, rate: rate(p.read, t0) };
        if (!started) {
          bar.start(Math.max(1, p.totalBytes), 0, payload);
          started = true;
        }
        bar.update(p.bytes, payload);
      },
      stop() {
        if (started) bar.stop();
      },
    };
  }
  let last = 0;
  const t0 = performance.now();
  return {
    update(p: IngestProgress) {
      const now = performance.now();
      if (now - last < 5000) return;
      last = now;
      const pct = p.totalBytes ? ((100 * p.bytes) / p.totalBytes).toFixed(0) : '0';
      stream.write(
        `${names.command}: ${pct}% ${p.read} works read, ${names.parts} ${p.filesDone}/${p.files}, ${rate(p.read, t0)} works/s\n`,
      );
    },
    stop() {},
  };
}

function rate(n: number, t0: number): number {
  const s = (performance.now() - t0) / 1000;
  return s > 0 ? Math.round(n / s) : 0;
}
