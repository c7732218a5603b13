import { describe, expect, it } from 'vitest';
import { RECONCILE_EVERY_MS, SETTLE_GRACE_MS } from '../../../src/payments/reconcile.js';
import { ri } from '../../helpers/cli.js';

/** What the commands' --help says, where it repeats the code. */
describe('ri --help', () => {
  it("lines every command's summary up in one column", () => {
    const r = ri(['--help']);
    expect(r.status).toBe(0);
    const commands = r.stdout.split('\n').filter((l) => l.startsWith('  ri '));
    expect(commands.length).toBeGreaterThan(10);
    const columns = commands.map((l) => /^ {2}ri \S+ +/.exec(l)![0].length);
    expect(new Set(columns).size).toBe(1);
  });

  it("states reconcile's wait past a payment's validity as reconcile has it", () => {
    const r = ri(['payments', '--help']);
    expect(r.status).toBe(0);
    const text = r.stdout.replace(/\s+/g, ' ');
    expect(text).toContain(`not used once its validity and ${SETTLE_GRACE_MS / 1000} s more have passed`);
    expect(text).toContain(`runs the same at start and every ${RECONCILE_EVERY_MS / 60_000} min`);
    expect(text).not.toMatch(/ten minutes/);
  });
});
