import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MAIN, ri } from '../../helpers/cli.js';
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

  it('exits 1 with one line naming a bad configuration value; 2 for a bad option', () => {
    const dataDir = tempDir('ri-start-');
    for (const [name, value] of [
      ['PORT', 'abc'],
      ['LOG_LEVEL', 'loud'],
      ['EDITION', 'x'],
      ['SNAPSHOTS_KEEP', '1'],
    ] as const) {
      const r = failedStart([], { DATA_DIR: dataDir, [name]: value });
      expect([r.status, r.stderr.split('\n').length], `${name}=${value}: ${r.stderr}`).toEqual([1, 1]);
      expect(r.stderr).toMatch(new RegExp(`^ri: bad configuration: ${name}: `));
    }
    for (const args of [['--port', 'abc'], ['--port', '70000'], ['--bogus']]) {
      const r = failedStart([...args, '--data-dir', dataDir], {});
      expect([r.status, r.stderr.split('\n').length], `${args.join(' ')}: ${r.stderr}`).toEqual([2, 1]);
      expect(r.stderr).toMatch(
        args[0] === '--port' ? /^ri: --port must be a port number/ : /^ri: Unknown option '--bogus'/,
      );
    }
  });

  it('is how every command says a bad configuration value, and a bad option', () => {
    const dataDir = tempDir('ri-config-');
    const env = { DATA_DIR: dataDir };
    const cases: [string[], Record<string, string>][] = [
      [['keys', 'list'], { EDITION: 'x' }],
      [['keys', 'list'], { STATE_URL: 'mysql://u@x/db' }],
      [['payments', 'reconcile'], { STATE_TIMEOUT_MS: 'soon' }],
      [['state', 'backup', join(dataDir, 'b.sqlite')], { EDITION: 'x' }],
      [['ingest', join(dataDir, 'none.jsonl')], { SNAPSHOTS_KEEP: '1' }],
      [['pull', '--since', '2025-01-01'], { OPENALEX_API_URL: 'not a url' }],
      [['rollback'], { PORT: 'abc' }],
    ];
    for (const [args, bad] of cases) {
      const r = ri(args, { ...env, ...bad });
      const label = `${Object.entries(bad)[0]!.join('=')} ri ${args.join(' ')}: ${r.stderr}`;
      expect([r.status, r.stderr.trimEnd().split('\n').length], label).toEqual([1, 1]);
      expect(r.stderr, label).toMatch(new RegExp(`^ri: bad configuration: ${Object.keys(bad)[0]}: `));
    }
    for (const args of [
      ['rollback', '--bogus'],
      ['ingest', '--bogus', 'x'],
      ['update', '--bogus', 'x'],
    ]) {
      const r = ri(args, env);
      expect([r.status, r.stderr.trimEnd().split('\n').length], `ri ${args.join(' ')}: ${r.stderr}`).toEqual([
        2, 1,
      ]);
      expect(r.stderr).toMatch(
        new RegExp(`^ri: Unknown option '--bogus'.* \\(ri ${args[0]} --help for its options\\)$`, 'm'),
      );
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
