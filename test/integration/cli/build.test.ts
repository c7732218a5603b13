import { describe, expect, it } from 'vitest';
import { ri } from '../../helpers/cli.js';

describe('ri build options', () => {
  it('prints its usage for --help and exits 0', () => {
    const r = ri(['build', '--help']);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^usage: ri build \[--full\] \[--data-dir DIR\]/);
    expect(r.stderr).toBe('');
  });

  it('answers an unknown option with one line and the usage, exit code 2 (no stack trace)', () => {
    const r = ri(['build', '--fulll']);
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^ri: build: Unknown option '--fulll'/);
    expect(r.stderr).toContain('usage: ri build');
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });
});
