import { execFileSync, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { closeSync, existsSync, openSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqliteStateStore } from '../../../src/access/sqlite-state-store.js';
import { MAIN, ri } from '../../helpers/cli.js';
import { fillDiskUnder, smallDisk } from '../../helpers/full-disk.js';
import { tempDir } from '../../helpers/works.js';

/**
 * The CLI when its output or its disk fails: a reader that stops early (`| head`) ends it
 * quietly; a full disk (stdout to /dev/full, a full state disk) is one line and exit 1. Never a
 * stack trace.
 */
const STACK = /^\s+at |node:internal|Unhandled 'error' event/m;
let dataDir: string;

beforeAll(async () => {
  dataDir = tempDir('ri-cli-faults-');
  const store = new SqliteStateStore(join(dataDir, 'state.sqlite'));
  await store.migrate();
  // More rows than a pipe holds (64 KiB), so the CLI is still writing when the reader goes.
  for (let i = 0; i < 3000; i++) {
    await store.recordPayment({
      id: randomUUID(),
      operation: 'getElementHistory',
      resource: '/v1/elements/Fe/history',
      amount: '50000',
      network: 'eip155:84532',
      asset: '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
      payer: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
      nonce: `0x${i.toString(16).padStart(64, '0')}`,
      paymentId: null,
      payloadHash: `${i}`.padStart(64, '0'),
      validUntil: new Date().toISOString(),
      dataVersion: null,
    });
  }
  await store.close();
});

afterAll(() => {
  rmSync(dataDir, { recursive: true, force: true });
});

/** `ri ARGS | head -2` in bash: head's output, the CLI's stderr and exit status. */
function piped(args: string) {
  const r = spawnSync(
    'bash',
    ['-c', `"${process.execPath}" "${MAIN}" ${args} 2>"$ERR" | head -2; echo "\${PIPESTATUS[0]}" >"$STATUS"`],
    {
      encoding: 'utf8',
      env: {
        ...process.env,
        LOG_LEVEL: 'silent',
        ERR: join(dataDir, 'err'),
        STATUS: join(dataDir, 'status'),
      },
    },
  );
  const read = (name: string) => execFileSync('cat', [join(dataDir, name)], { encoding: 'utf8' });
  return { stdout: r.stdout, stderr: read('err'), status: Number(read('status')) };
}

describe('ri when its reader stops early', () => {
  it('`ri payments list | head -2` prints two rows and exits 0, no stack trace', () => {
    const r = piped(`payments list --data-dir "${dataDir}"`);
    expect(r.stdout.split('\n').filter(Boolean)).toHaveLength(2);
    expect(r.stderr).not.toMatch(STACK);
    expect(r.stderr).not.toMatch(/EPIPE/);
    expect(r.status).toBe(0);
  });
});

describe('ri on a full disk', () => {
  it.skipIf(!existsSync('/dev/full'))('output to a full disk (/dev/full): one line, exit 1', () => {
    for (const args of [['payments', 'list', '--data-dir', dataDir], ['--help']]) {
      const out = openSync('/dev/full', 'w');
      try {
        const r = spawnSync(process.execPath, [MAIN, ...args], {
          encoding: 'utf8',
          env: { ...process.env, LOG_LEVEL: 'silent' },
          stdio: ['ignore', out, 'pipe'],
        });
        const what = args.join(' ');
        expect(r.stderr, what).not.toMatch(STACK);
        expect(r.stderr, what).toMatch(/^ri: .*(ENOSPC|no space left)/im);
        expect(
          r.stderr.split('\n').filter((l) => l.startsWith('ri:')),
          what,
        ).toHaveLength(1);
        expect(r.status, what).toBe(1);
      } finally {
        closeSync(out);
      }
    }
  });

  /** A real full disk under the state store: a small tmpfs (needs root). */
  const { dir: disk, mounted, remove } = smallDisk('ri-cli-full-');
  afterAll(remove);

  it.skipIf(!mounted)('a state store on a full disk: `ri keys create` says so in one line, exit 1', () => {
    expect(ri(['keys', 'create', '--plan', 'free', '--data-dir', disk]).status).toBe(0);
    // A server holding the file open, the disk under it full.
    const server = fillDiskUnder(join(disk, 'state.sqlite'));
    try {
      const r = ri(['keys', 'create', '--plan', 'free', '--data-dir', disk]);
      expect(r.stderr).not.toMatch(STACK);
      expect(r.stderr).toMatch(/^ri: .*disk is full/im);
      expect(r.stderr.split('\n').filter(Boolean)).toHaveLength(1);
      expect(r.status).toBe(1);
    } finally {
      server.close();
    }
  });
});
