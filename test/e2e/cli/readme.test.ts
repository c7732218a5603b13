import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../helpers/works.js';
import { freePort } from '../../helpers/x402.js';

const ROOT = resolve(import.meta.dirname, '../../..');
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');

/** The README's first shell block: the two commands a newcomer runs. */
function quickStart(): string[] {
  const block = /```sh\n([\s\S]*?)```/.exec(README)![1]!;
  return block
    .split('\n')
    .map((l) => l.replace(/#.*$/, '').trim())
    .filter(Boolean);
}

let server: ChildProcess | undefined;
afterAll(() => {
  // npm start runs node under sh and npm: end the whole process group.
  if (server?.pid) {
    try {
      process.kill(-server.pid, 'SIGTERM');
    } catch {}
  }
});

/**
 * What a newcomer does, on a fresh clone of the committed tree: the README's install and start,
 * its curl examples, then `npx ri keys create` (once broken by a missing execute bit) and a call
 * with that key. `npm test` itself is what runs this, so it is not run again here.
 */
describe("the README's commands on a fresh clone", () => {
  it('npm install && npm start serves the sample; npx ri keys create gives a key that works', async () => {
    const commands = quickStart();
    expect(commands[0]).toBe('npm install && npm start');
    expect(commands[1]).toBe('npm test');
    const clone = join(tempDir('ri-readme-'), 'clone');
    execFileSync('git', ['clone', '--quiet', ROOT, clone]);
    // The packages this checkout already installed, hard-linked in (seconds, not minutes of
    // downloads and native builds): `npm install` then finds them up to date, and still runs
    // the clone's own prepare (the TypeScript build and the executable bit).
    execFileSync('cp', ['-al', join(ROOT, 'node_modules'), join(clone, 'node_modules')]);
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      PORT: String(await freePort()),
      HOST: '127.0.0.1',
      npm_config_audit: 'false',
      npm_config_fund: 'false',
      npm_config_prefer_offline: 'true',
      npm_config_update_notifier: 'false',
    };
    delete env.NODE_OPTIONS;
    delete env.VITEST;
    delete env.DATA_DIR;
    delete env.STATE_URL;

    // npm install && npm start, as written (npm answers from its cache where it can).
    server = spawn('sh', ['-c', commands[0]!], {
      cwd: clone,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let output = '';
    server.stdout!.on('data', (d) => (output += d));
    server.stderr!.on('data', (d) => (output += d));
    const base = `http://127.0.0.1:${env.PORT}`;
    for (let i = 0; ; i++) {
      if (/ at http:\/\/\S+\/v1/.test(output)) break; // listening (not the earlier 'serving snapshot' log)
      if (server.exitCode !== null || i > 1200) throw new Error(`npm start did not serve:\n${output}`);
      await new Promise((r) => setTimeout(r, 250));
    }

    // The README's curl examples, on this port.
    const curls = [...README.matchAll(/^curl localhost:8080(\S+)/gm)].map((m) => m[1]!);
    expect(curls.length).toBeGreaterThan(0);
    for (const path of curls) expect((await fetch(`${base}${path}`)).status, path).toBe(200);

    // The README's key command, and a call only a key opens.
    const keysLine = /^npx ri keys create .*$/m.exec(README)![0].replace(/#.*$/, '').trim();
    // Asynchronously: a blocked event loop would miss the server closing idle keep-alive sockets.
    const created = await promisify(execFile)('sh', ['-c', keysLine], { cwd: clone, env, encoding: 'utf8' });
    const key = created.stdout.trim().split('\n').at(-1)!;
    expect(key).toMatch(/^ri_[a-z0-9]{8}_/);
    const keyed = await fetch(`${base}/v1/elements/Fe/history`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(keyed.status).toBe(200);
    expect((await fetch(`${base}/`)).status).toBe(200);
  }, 900_000);
});
