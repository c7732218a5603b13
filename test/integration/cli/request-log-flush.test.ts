import { describe, expect, it } from 'vitest';
import { riBackground, stop, until } from '../../helpers/cli.js';
import { sampleDataDir } from '../../helpers/sample.js';
import { tempDir } from '../../helpers/works.js';

/**
 * The request log is written asynchronously (lines of many requests in one write under load): a
 * SIGTERM right after a burst still leaves one line per request answered, and a line at rest goes
 * out soon.
 */
describe('the request log of a real ri serve', () => {
  /** A server under a burst of `requests` cached reads, all answered: its process and output. */
  async function afterBurst(requests: number) {
    const { dataDir } = await sampleDataDir();
    const env = {
      STATE_URL: `sqlite:${tempDir('ri-log-flush-')}/state.sqlite`,
      LOG_LEVEL: 'info',
      RATE_LIMIT_PER_IP: '1000000',
    };
    const server = riBackground(
      ['serve', '--port', '0', '--host', '127.0.0.1', '--data-dir', dataDir],
      env,
      /at (http:\/\/\S+)\/v1/,
    );
    const base = (await server.started)[1]!;
    let answered = 0;
    for (let i = 0; i < requests; i += 50)
      await Promise.all(
        Array.from({ length: 50 }, async (_, j) => {
          const res = await fetch(`${base}/v1/elements/${['Fe', 'Ni', 'Co'][j % 3]}`);
          await res.arrayBuffer();
          if (res.status === 200) answered++;
        }),
      );
    expect(answered).toBe(requests);
    const requestLines = () =>
      server
        .output()
        .stdout.split('\n')
        .filter((l) => l.includes('"msg":"request"') && l.includes('/v1/elements/'));
    return { server, requestLines };
  }

  it('holds a line for every request answered before a SIGTERM, under load', async () => {
    const requests = 1_500;
    const { server, requestLines } = await afterBurst(requests);
    // At once: the lines of the last burst may still be in the logger's buffer.
    expect(await stop(server.child)).toBe(0);
    expect(requestLines()).toHaveLength(requests);
  }, 120_000);

  it('holds them when a second signal ends the process at once (process.exit)', async () => {
    const requests = 500;
    const { server, requestLines } = await afterBurst(requests);
    // All output read once the pipes close, not at 'exit'.
    const closed = new Promise<number | null>((ok) => server.child.once('close', ok));
    server.child.kill('SIGTERM');
    // Apart, or the two could arrive as one; well within the log's 100 ms flush.
    await new Promise((ok) => setTimeout(ok, 10));
    server.child.kill('SIGTERM');
    expect(await closed).toBe(1);
    expect(server.output().stdout).toContain('SIGTERM again: exiting without waiting');
    expect(requestLines()).toHaveLength(requests);
  }, 120_000);

  it('writes the line of a lone request within a second, the server still running', async () => {
    const { dataDir } = await sampleDataDir();
    const server = riBackground(
      ['serve', '--port', '0', '--host', '127.0.0.1', '--data-dir', dataDir],
      { STATE_URL: `sqlite:${tempDir('ri-log-rest-')}/state.sqlite`, LOG_LEVEL: 'info' },
      /at (http:\/\/\S+)\/v1/,
    );
    try {
      const base = (await server.started)[1]!;
      const res = await fetch(`${base}/v1/elements/Ni`);
      await res.arrayBuffer();
      const line = await until(
        () =>
          server
            .output()
            .stdout.split('\n')
            .find((l) => l.includes('"path":"/v1/elements/Ni"')),
        1_000,
      );
      expect(JSON.parse(line)).toMatchObject({ msg: 'request', route: '/v1/elements/:symbol' });
      expect(server.child.exitCode).toBeNull();
    } finally {
      await stop(server.child);
    }
  }, 60_000);
});
