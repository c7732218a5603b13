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

describe('the batch jobs’ memory budget (BUILD_MEMORY_MB)', () => {
  it('sets the corpus store’s memory limit for `ri build`, and refuses a budget too small', async () => {
    const { sampleDataDir } = await import('../../helpers/sample.js');
    const { dataDir } = await sampleDataDir();
    // 1,500 MB: DuckDB gets 40%, 600 MB, which DuckDB itself reports as 572.2 MiB.
    const r = ri(['build', '--data-dir', dataDir], { BUILD_MEMORY_MB: '1500' });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toContain('build: memory budget 1500 MB (BUILD_MEMORY_MB)');
    expect(r.stderr).toContain("build: DuckDB's memory limit 572.2 MiB");
    // The default, 2,500 MB: 1,000 MB.
    const byDefault = ri(['build', '--data-dir', dataDir]);
    expect(byDefault.stderr).toContain("build: DuckDB's memory limit 953.6 MiB");

    const refused = ri(['build', '--data-dir', dataDir], { BUILD_MEMORY_MB: '100' });
    expect(refused.status).toBe(1);
    expect(refused.stderr).toMatch(/^ri: bad configuration: BUILD_MEMORY_MB: /);
    expect(refused.stderr).not.toMatch(/\n\s+at /);
  }, 120_000);
});
