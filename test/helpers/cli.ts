import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { resolve } from 'node:path';

/** The built CLI (npm test builds dist first via pretest). */
export const MAIN = resolve(import.meta.dirname, '../../dist/cli/main.js');

export function ri(args: string[], env: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, [MAIN, ...args], {
    encoding: 'utf8',
    env: { ...process.env, ...env, LOG_LEVEL: 'silent' },
    timeout: 120_000,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** `ri` as a child process without blocking this process's event loop (servers and load keep going). */
export function riAsync(args: string[], env: Record<string, string> = {}) {
  return new Promise<{ status: number | null; stdout: string; stderr: string }>((resolveRun) => {
    const child = spawn(process.execPath, [MAIN, ...args], {
      env: { ...process.env, ...env, LOG_LEVEL: 'silent' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d) => {
      stdout += d;
    });
    child.stderr!.on('data', (d) => {
      stderr += d;
    });
    // 'close', not 'exit': at exit the pipes may still hold output not yet read (a key created
    // under load came back as an empty stdout).
    child.on('close', (status) => resolveRun({ status, stdout, stderr }));
  });
}

/** Starts a long-running `ri` command; resolves once stdout matches the pattern. */
export function riBackground(args: string[], env: Record<string, string>, ready: RegExp) {
  const child = spawn(process.execPath, [MAIN, ...args], {
    env: { ...process.env, LOG_LEVEL: 'silent', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stderr!.on('data', (d) => {
    stderr += d;
  });
  const started = new Promise<RegExpMatchArray>((resolveMatch, reject) => {
    child.stdout!.on('data', (d) => {
      stdout += d;
      const m = stdout.match(ready);
      if (m) resolveMatch(m);
    });
    child.on('exit', (code) => reject(new Error(`exited with ${code} before ready: ${stderr}`)));
  });
  return { child, started, output: () => ({ stdout, stderr }) };
}

export function stop(child: ChildProcess): Promise<number | null> {
  return new Promise((resolveExit) => {
    if (child.exitCode !== null) return resolveExit(child.exitCode);
    child.once('exit', (code) => resolveExit(code));
    child.kill('SIGTERM');
  });
}

export async function until<T>(
  probe: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * `ri serve` on a data folder, with a key of `plan` made first by `ri keys create` (`keyArgs`: more
 * of its options): the base URL, the key and the process (end it with `stop`).
 */
export async function riServeWithKey(
  dataDir: string,
  plan: string,
  env: Record<string, string>,
  keyArgs: string[] = [],
): Promise<{ base: string; key: string; child: ChildProcess }> {
  const created = ri(['keys', 'create', '--plan', plan, ...keyArgs], env);
  if (created.status !== 0) throw new Error(`ri keys create: ${created.stderr}`);
  const key = created.stdout.trim().split('\n').at(-1)!;
  const server = riBackground(
    ['serve', '--port', '0', '--host', '127.0.0.1', '--data-dir', dataDir],
    env,
    /at (http:\/\/\S+)\/v1/,
  );
  return { base: (await server.started)[1]!, key, child: server.child };
}

/**
 * `count` replicas of `ri serve` on free loopback ports, one after the other, pushed onto
 * `servers` (so a failed start is still stopped by the caller's afterAll) and their base URLs
 * onto `bases`.
 */
export async function serveReplicas(
  count: number,
  env: Record<string, string>,
  servers: ReturnType<typeof riBackground>[],
  bases: string[],
): Promise<void> {
  for (let i = 0; i < count; i++) {
    const server = riBackground(
      ['serve', '--port', '0', '--host', '127.0.0.1'],
      env,
      /at (http:\/\/\S+)\/v1/,
    );
    servers.push(server);
    bases.push((await server.started)[1]!);
  }
}
