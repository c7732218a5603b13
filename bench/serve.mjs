// A `ri serve` for the HTTP benchmarks: its own process on a random local port, limits off, and
// a key on the given plan in a throw-away state store (the bench data folder is only read).
import { spawn, spawnSync } from 'node:child_process';
import { createWriteStream, existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const cli = join(resolve(import.meta.dirname, '..'), 'dist/cli/main.js');

/**
 * The data a benchmark serves: the 1M-works bench data when present (npm run bench:build), else
 * the 100k one, else an empty folder where `ri serve` builds the bundled sample.
 */
export function benchDataDir(name) {
  const benchDir = resolve(process.env.BENCH_DIR ?? join(resolve(import.meta.dirname, '..'), '.bench'));
  const found = [join(benchDir, 'data-1000000'), join(benchDir, 'data-100000')].find((d) =>
    existsSync(join(d, 'snapshots/CURRENT')),
  );
  if (found) return found;
  const dir = mkdtempSync(join(tmpdir(), `ri-bench-${name}-`));
  console.error(`no bench data: serving the bundled sample from ${dir}`);
  return dir;
}

/**
 * The synthetic works of a size (`ri generate --seed 1`) under the bench folder, generated once
 * and kept: the same corpus for every run of every batch benchmark. Returns its folder.
 */
export function syntheticCorpus(benchDir, works, cliPath = cli) {
  const corpus = join(benchDir, `corpus-${works}`);
  if (!existsSync(join(corpus, 'works'))) {
    console.error(`generating ${works} works (not timed)...`);
    const args = [cliPath, 'generate', '--works', String(works), '--seed', '1', '--out', corpus, '--force'];
    const g = spawnSync(process.execPath, args, { stdio: 'inherit' });
    if (g.status !== 0) throw new Error('generate failed');
  }
  return corpus;
}

export async function startBenchServer(
  dataDir,
  { plan = 'personal', portBase = 18600, env: extraEnv = {}, cliPath = cli } = {},
) {
  const stateDir = mkdtempSync(join(tmpdir(), 'ri-bench-state-'));
  const env = {
    ...process.env,
    DATA_DIR: dataDir,
    STATE_URL: `sqlite:${join(stateDir, 'state.sqlite')}`,
    LOG_LEVEL: 'silent',
    RATE_LIMIT_PER_KEY: '1000000000',
    RATE_LIMIT_PER_IP: '1000000000',
    ...extraEnv,
  };
  const created = spawnSync(process.execPath, [cliPath, 'keys', 'create', '--plan', plan], {
    env,
    encoding: 'utf8',
  });
  if (created.status !== 0) throw new Error(created.stderr);
  const key = created.stdout.trim().split('\n').at(-1);
  const port = portBase + Math.floor(Math.random() * 200);
  // BENCH_SERVER_NODE_ARGS: Node flags for the server alone (e.g. --trace-gc, --cpu-prof).
  const nodeArgs = (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child = spawn(
    process.execPath,
    [...nodeArgs, cliPath, 'serve', '--port', String(port), '--host', '127.0.0.1'],
    {
      env,
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  // A benchmark that fails half way must not leave the server running (nor wait for it).
  process.on('exit', () => child.kill('SIGTERM'));
  process.on('uncaughtException', (e) => {
    console.error(e);
    process.exit(1);
  });
  // Listening (the 'ri: serving ... at http://' line, not the earlier 'serving snapshot' log).
  await new Promise((ok) => child.stdout.on('data', (d) => / at http:\/\//.test(String(d)) && ok()));
  // BENCH_SERVER_STDOUT: a file that gets what the server prints from then on (with --trace-gc, say).
  if (process.env.BENCH_SERVER_STDOUT) child.stdout.pipe(createWriteStream(process.env.BENCH_SERVER_STDOUT));
  return {
    key,
    child,
    base: `http://127.0.0.1:${port}`,
    stop: async () => {
      child.kill('SIGTERM');
      await new Promise((ok) => child.on('exit', ok));
    },
  };
}
