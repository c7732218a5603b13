// A `ri serve` for the HTTP benchmarks, run as `npm start` runs it (its Node flags, the request log
// on): its own process on a random local port, limits off, and a key on the given plan in a
// throw-away state store (the bench data folder is only read). What it prints goes to a file, not
// the terminal; /proc gives its CPU time, so every benchmark can put CPU per request beside
// requests/s.
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const root = resolve(import.meta.dirname, '..');
const cli = join(root, 'dist/cli/main.js');

/** The Node flags of `npm start` (package.json: `node <flags> dist/cli/main.js serve`). */
export const START_NODE_ARGS = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
  .scripts.start.split(/\s+/)
  .filter((word) => word.startsWith('--'));

// Clock ticks per second of /proc/<pid>/stat's times (USER_HZ: 100 on Linux, asked once).
const CLOCK_TICKS = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout?.trim()) || 100;

/**
 * A process's CPU time so far (user + system, every thread: event loop, workers, compression) in
 * ms, from /proc, or one thread's (`tid`); null where there is no /proc.
 */
export function cpuMs(pid, tid) {
  try {
    // The fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
    const f = readFileSync(`/proc/${pid}${tid === undefined ? '' : `/task/${tid}`}/stat`, 'utf8')
      .split(') ')[1]
      .split(' ');
    return ((Number(f[11]) + Number(f[12])) * 1000) / CLOCK_TICKS;
  } catch {
    return null;
  }
}

/** CPU ms per request from two cpuMs readings and the requests served between them (3 decimals). */
export function cpuMsPerRequest(before, after, requests) {
  if (before === null || after === null || !requests) return null;
  return Number(((after - before) / requests).toFixed(3));
}

/**
 * The data a benchmark serves: the 1M-works bench data when present (npm run bench:build), else
 * the 100k one, else the bundled sample built in a new folder, as `ri serve` builds it on a first
 * start, but in a process of its own: a server that built its data at start then served cached
 * reads at up to a fifth more CPU per request than one that opened it (measured side by side, for
 * as long as it ran), and no replica, nor any later `npm start`, builds.
 */
export function benchDataDir(name) {
  const benchDir = resolve(process.env.BENCH_DIR ?? join(resolve(import.meta.dirname, '..'), '.bench'));
  const found = [join(benchDir, 'data-1000000'), join(benchDir, 'data-100000')].find((d) =>
    existsSync(join(d, 'snapshots/CURRENT')),
  );
  if (found) return found;
  const dir = mkdtempSync(join(tmpdir(), `ri-bench-${name}-`));
  console.error(`no bench data: serving the bundled sample, built in ${dir}`);
  const pipeline = pathToFileURL(join(root, 'dist/cli/pipeline.js')).href;
  const build = `import(${JSON.stringify(pipeline)}).then((m) => m.ensureDefaultSnapshot(${JSON.stringify(dir)}))`;
  const built = spawnSync(process.execPath, ['-e', build], { stdio: 'inherit' });
  if (built.status !== 0) throw new Error(`building the bundled sample in ${dir} failed`);
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
  { plan = 'personal', portBase = 18600, env: extraEnv = {}, cliPath = cli, wrap = [] } = {},
) {
  const stateDir = mkdtempSync(join(tmpdir(), 'ri-bench-state-'));
  const env = {
    ...process.env,
    DATA_DIR: dataDir,
    STATE_URL: `sqlite:${join(stateDir, 'state.sqlite')}`,
    RATE_LIMIT_PER_KEY: '1000000000',
    RATE_LIMIT_PER_IP: '1000000000',
    ...extraEnv,
  };
  const created = spawnSync(process.execPath, [cliPath, 'keys', 'create', '--plan', plan], {
    env: { ...env, LOG_LEVEL: 'silent' },
    encoding: 'utf8',
  });
  if (created.status !== 0) throw new Error(created.stderr);
  const key = created.stdout.trim().split('\n').at(-1);
  const port = portBase + Math.floor(Math.random() * 200);
  // BENCH_SERVER_NODE_ARGS: more Node flags for the server alone (e.g. --trace-gc, --cpu-prof).
  const nodeArgs = [
    ...START_NODE_ARGS,
    ...(process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean),
  ];
  // The request log on, as `npm start` has it (LOG_LEVEL as in this environment, else info), into a
  // file the server writes itself: through a pipe to this process it would cost the load generator.
  // BENCH_SERVER_STDOUT: keep that file there (else it is in the state folder, removed at the end).
  // Appended to: two servers of one benchmark (or two runs) may share it.
  const logPath = process.env.BENCH_SERVER_STDOUT ?? join(stateDir, 'server.log');
  const from = existsSync(logPath) ? statSync(logPath).size : 0;
  const log = openSync(logPath, 'a');
  // `wrap`: a command to run the server under (e.g. valgrind and its options).
  const command = [
    ...wrap,
    process.execPath,
    ...nodeArgs,
    cliPath,
    'serve',
    '--port',
    String(port),
    '--host',
    '127.0.0.1',
  ];
  const child = spawn(command[0], command.slice(1), { env, stdio: ['ignore', log, 'inherit'] });
  closeSync(log);
  const exited = new Promise((ok) => child.once('exit', ok));
  const cleanUp = () => rmSync(stateDir, { recursive: true, force: true });
  // A benchmark that fails half way must not leave the server running (nor wait for it).
  process.on('exit', () => {
    child.kill('SIGTERM');
    cleanUp();
  });
  process.on('uncaughtException', (e) => {
    console.error(e);
    process.exit(1);
  });
  // Listening: the 'ri: serving ... at http://' line (not the earlier 'serving snapshot' log).
  const ready = ` at http://127.0.0.1:${port}/v1`;
  while (!readFileSync(logPath).subarray(from).toString().includes(ready)) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(
        `ri serve ended (${child.exitCode ?? child.signalCode}) before listening:\n${readFileSync(logPath).subarray(from).toString().slice(-2000)}`,
      );
    await new Promise((ok) => setTimeout(ok, 50));
  }
  return {
    key,
    child,
    base: `http://127.0.0.1:${port}`,
    logPath,
    /** The server's CPU time so far in ms (see cpuMs). */
    cpuMs: () => cpuMs(child.pid),
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
      cleanUp();
    },
  };
}

/**
 * Resolves once a bench server is idle (under 20 ms of CPU in half a second, at most 30 s): after
 * a first question, its workers have read the titles' statistics it started (seconds at 1M
 * works), so the questions timed next are ranked as on a server that has been running a while.
 */
export async function untilIdle(server) {
  for (let i = 0, before = server.cpuMs(); i < 60; i++) {
    await new Promise((r) => setTimeout(r, 500));
    const now = server.cpuMs();
    if (now - before < 20) return;
    before = now;
  }
}
