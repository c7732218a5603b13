import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { riServeWithKey, stop } from '../helpers/cli.js';
import { sampleDataDir } from '../helpers/sample.js';
import { tempDir } from '../helpers/works.js';

const require = createRequire(import.meta.url);
const INSPECTOR = join(
  dirname(require.resolve('@modelcontextprotocol/inspector-cli/package.json')),
  'build/index.js',
);

function inspect(args: string[]) {
  // Run from its build folder: it finds its own package.json by a path relative to the working directory.
  const r = spawnSync(process.execPath, [INSPECTOR, ...args], {
    cwd: dirname(INSPECTOR),
    encoding: 'utf8',
    timeout: 60_000,
  });
  expect(r.status, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as Record<string, unknown>;
}

describe('@modelcontextprotocol/inspector-cli against a real ri serve', () => {
  it('lists the tools and calls one, with a key on the connection', async () => {
    const { dataDir } = await sampleDataDir();
    const env = { STATE_URL: `sqlite:${tempDir('ri-mcp-state-')}/state.sqlite` };
    const server = await riServeWithKey(dataDir, 'personal', env);
    const { base, key } = server;
    try {
      const listed = inspect([`${base}/mcp`, '--method', 'tools/list']) as { tools: { name: string }[] };
      expect(listed.tools).toHaveLength(14);
      const element = inspect([
        `${base}/mcp`,
        '--method',
        'tools/call',
        '--tool-name',
        'get_element_ri',
        '--tool-arg',
        'symbol=Fe',
      ]) as { structuredContent: { symbol: string; ri: number } };
      expect(element.structuredContent.symbol).toBe('Fe');
      const subject = inspect([
        `${base}/mcp`,
        '--method',
        'tools/call',
        '--tool-name',
        'search_subjects',
        '--tool-arg',
        'q=oxygen evolution',
        '--header',
        `Authorization: Bearer ${key}`,
      ]) as { isError?: boolean; structuredContent: { results: unknown[] } };
      expect(subject.isError ?? false).toBe(false);
      expect(subject.structuredContent.results.length).toBeGreaterThan(0);
    } finally {
      await stop(server.child);
    }
    // A build, a server and three CLI processes: on a busy 2-core machine this alone takes 30 s.
  }, 180_000);
});
