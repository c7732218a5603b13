import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MAIN } from '../../helpers/cli.js';
import { sampleDataDir } from '../../helpers/sample.js';
import { tempDir } from '../../helpers/works.js';

/** Runs `ri serve` and expects it to give up: exit 1, one line on stderr, within the time limit. */
function failedStart(args: string[], env: Record<string, string>) {
  const started = Date.now();
  const r = spawnSync(process.execPath, [MAIN, 'serve', '--host', '127.0.0.1', ...args], {
    encoding: 'utf8',
    env: { ...process.env, LOG_LEVEL: 'silent', ...env },
    timeout: 60_000,
  });
  return { status: r.status, stderr: r.stderr.trim(), seconds: (Date.now() - started) / 1000 };
}

describe('ri serve when it cannot start', () => {
  it('exits with one line (no stack trace, no hang) when the state store cannot be reached', async () => {
    const { dataDir } = await sampleDataDir();
    const r = failedStart(['--port', '0', '--data-dir', dataDir], {
      STATE_URL: 'postgres://ri:secret@127.0.0.1:1/db',
    });
    expect(r.status).toBe(1);
    expect(r.stderr.split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(
      /^ri: cannot open the state store \(postgres:\/\/ri:\*\*\*@127\.0\.0\.1:1\/db\): .*ECONNREFUSED/,
    );
    expect(r.stderr).not.toContain('secret');
  });

  it('exits with one line when the port is taken', async () => {
    const { dataDir } = await sampleDataDir();
    const blocker = createServer().listen(0, '127.0.0.1');
    await new Promise((r) => blocker.once('listening', r));
    const port = (blocker.address() as { port: number }).port;
    try {
      const r = failedStart(['--port', String(port), '--data-dir', dataDir], {
        STATE_URL: `sqlite:${tempDir('ri-start-')}/state.sqlite`,
      });
      expect(r.status).toBe(1);
      expect(r.stderr).toMatch(new RegExp(`^ri: cannot listen on 127\\.0\\.0\\.1:${port}: .*EADDRINUSE`));
    } finally {
      blocker.close();
    }
  });

  it('exits with one line when DATA_DIR cannot be used', () => {
    const file = join(tempDir('ri-start-'), 'not-a-folder');
    writeFileSync(file, 'x');
    const r = failedStart(['--port', '0', '--data-dir', file], {});
    expect(r.status).toBe(1);
    expect(r.stderr.split('\n').at(-1)).toMatch(/^ri: cannot prepare the data in .*not-a-folder: /);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });
});
