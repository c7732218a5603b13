import { describe, expect, it } from 'vitest';
import { riBackground, stop } from '../../helpers/cli.js';
import { sampleDataDir } from '../../helpers/sample.js';
import { tempDir } from '../../helpers/works.js';

/**
 * The request log is written asynchronously (lines of many requests in one write under load):
 * a SIGTERM right after a burst still leaves one line per request answered.
 */
describe('the request log of a real ri serve', () => {
  it('holds a line for every request answered before a SIGTERM, under load', async () => {
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
    const requests = 1_500;
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
    // At once: the lines of the last burst may still be in the logger's buffer.
    expect(await stop(server.child)).toBe(0);
    const lines = server
      .output()
      .stdout.split('\n')
      .filter((l) => l.includes('"msg":"request"') && l.includes('/v1/elements/'));
    expect(lines).toHaveLength(requests);
  }, 120_000);
});
