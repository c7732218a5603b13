import { spawnSync } from 'node:child_process';
import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MAIN } from '../../helpers/cli.js';

const ROOT = resolve(import.meta.dirname, '../../..');

describe('the ri executable after a build', () => {
  it('is executable, so `npx ri` runs it (it failed with "ri: Permission denied")', () => {
    expect(statSync(MAIN).mode & 0o111).toBe(0o111);
    const r = spawnSync('npx', ['--no-install', 'ri', 'keys', 'create', '--help'], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 60_000,
      // npm's update check asks the registry; it is the suspect of one 30-s hang of npx on a
      // fresh machine (not reproduced), and it has nothing to do with the bin.
      env: { ...process.env, npm_config_update_notifier: 'false' },
    });
    expect(r.stderr).not.toMatch(/Permission denied/);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/ri keys create --plan/);
  }, 90_000); // longer than the spawn's own timeout, so a hang reports what npx printed
});
