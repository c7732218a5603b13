import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { riServeWithKey, stop } from '../../helpers/cli.js';
import { sampleDataDir } from '../../helpers/sample.js';
import { tempDir } from '../../helpers/works.js';

const require = createRequire(import.meta.url);
const packageDir = (name: string) => dirname(require.resolve(`${name}/package.json`));
// The latest Inspector (2.x) declares Node >= 22.19; its CLI mode runs on the project's Node 20,
// which this test runs it on (INSPECTOR_NODE: another node binary to run it with).
const NODE = process.env.INSPECTOR_NODE ?? process.execPath;
const INSPECTOR = join(packageDir('@modelcontextprotocol/inspector'), 'clients/launcher/build/index.js');

/** A tool result as the Inspector prints it with `--format json` (`{"result": ...}`). */
interface ToolResult {
  content: { type: string; text: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

/** `mcp-inspector --cli <url> ...`: its exit status, the result it printed (and its schema findings, with --strict) and its stderr. */
function inspect(url: string, args: string[], home: string) {
  const r = spawnSync(NODE, [INSPECTOR, '--cli', url, '--format', 'json', ...args], {
    encoding: 'utf8',
    // It keeps its catalog and stored OAuth under ~/.mcp-inspector: a throw-away home.
    env: { ...process.env, HOME: home },
    timeout: 60_000,
  });
  if (r.error) throw r.error;
  const printed = r.stdout.trim()
    ? (JSON.parse(r.stdout) as { result: unknown; schemaFindings?: unknown[] })
    : undefined;
  return { status: r.status, result: printed?.result, findings: printed?.schemaFindings, stderr: r.stderr };
}

describe('MCP Inspector 2.12 CLI against a real ri serve', () => {
  it('lists the tools, calls one with a key on the connection and reports an error result', async () => {
    const { dataDir } = await sampleDataDir();
    const env = { STATE_URL: `sqlite:${tempDir('ri-mcp-state-')}/state.sqlite` };
    const server = await riServeWithKey(dataDir, 'personal', env);
    const url = `${server.base}/mcp`;
    const home = tempDir('ri-inspector-home-');
    try {
      const version = spawnSync(NODE, [INSPECTOR, '--cli', '--version'], { encoding: 'utf8' });
      expect(version.stdout.trim()).toBe('2.12.0');

      // --strict: the tool schemas' portability checked in full (type lists, schemas that
      // constrain nothing...): no error and no warning, so nothing on stderr.
      const listed = inspect(url, ['--method', 'tools/list', '--strict'], home);
      expect(listed.status, listed.stderr).toBe(0);
      expect(listed.findings).toBeUndefined();
      expect(listed.stderr).toBe('');
      const names = (listed.result as { tools: { name: string }[] }).tools.map((t) => t.name);
      expect(names).toHaveLength(15);
      expect(names).toEqual(expect.arrayContaining(['search_subjects', 'get_element_ri']));

      // search_subjects needs a key: with it the call succeeds...
      const search = [
        '--method',
        'tools/call',
        '--tool-name',
        'search_subjects',
        '--tool-arg',
        'q=oxygen evolution',
      ];
      const keyed = inspect(url, [...search, '--header', `Authorization: Bearer ${server.key}`], home);
      expect(keyed.status, keyed.stderr).toBe(0);
      const found = keyed.result as ToolResult;
      expect(found.isError ?? false).toBe(false);
      expect((found.structuredContent as { results: unknown[] }).results.length).toBeGreaterThan(0);
      // ...and without it the same call is refused, so the header did reach the server.
      const keyless = inspect(url, search, home);
      expect(keyless.status).toBe(5);
      expect(JSON.parse((keyless.result as ToolResult).content[0]!.text)).toMatchObject({
        code: 'authentication_required',
      });

      // An error result: the Inspector exits 5 (tool_error) and prints the result with the REST error body.
      const unknown = inspect(
        url,
        ['--method', 'tools/call', '--tool-name', 'get_element_ri', '--tool-arg', 'symbol=Xx'],
        home,
      );
      expect(unknown.status).toBe(5);
      expect(JSON.parse(unknown.stderr)).toMatchObject({ error: { code: 'tool_is_error' } });
      const failed = unknown.result as ToolResult;
      expect(failed.isError).toBe(true);
      expect(JSON.parse(failed.content[0]!.text)).toMatchObject({
        code: 'unknown_symbol',
        suggestions: ['Xe'],
      });
    } finally {
      await stop(server.child);
    }
    // A build, a server and five CLI processes: on a busy 2-core machine this alone takes 30 s.
  }, 180_000);
});
