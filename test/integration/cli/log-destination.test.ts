import { closeSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { type LogDestination, logDestination } from '../../../src/cli/log-destination.js';
import { requestLineWriter } from '../../../src/http/request-log.js';
import { tempDir } from '../../helpers/works.js';

/** The log's destination (cli/log-destination.ts) writing into a file of its own. */
describe('the log destination', () => {
  const opened: { destination: LogDestination; fd: number }[] = [];
  const open = (options: { minLength?: number; flushMs?: number } = {}) => {
    const path = join(tempDir('ri-log-destination-'), 'log');
    const fd = openSync(path, 'a');
    const destination = logDestination({ fd, ...options });
    opened.push({ destination, fd });
    return { destination, written: () => readFileSync(path, 'utf8') };
  };
  afterEach(() => {
    for (const { destination, fd } of opened.splice(0)) {
      destination.close();
      closeSync(fd);
    }
  });

  it('holds lines until they reach minLength, then writes them all, in order', () => {
    const { destination, written } = open({ minLength: 120, flushMs: 60_000 });
    const line = (i: number) => `{"n":${i},"pad":"${'x'.repeat(20)}"}\n`; // 37 characters
    for (let i = 0; i < 3; i++) destination.write(line(i));
    expect(written()).toBe('');
    destination.write(line(3));
    expect(written()).toBe([0, 1, 2, 3].map(line).join(''));
    destination.write(line(4));
    expect(written()).toBe([0, 1, 2, 3].map(line).join(''));
    destination.flushSync();
    expect(written()).toBe([0, 1, 2, 3, 4].map(line).join(''));
  });

  it('writes any text as UTF-8, a line longer than its buffer too', () => {
    const { destination, written } = open({ minLength: 64, flushMs: 60_000 });
    const lines = ['{"msg":"Fe₂O₃ – ß – 😀"}\n', `{"msg":"${'é'.repeat(200_000)}"}\n`, '{"msg":"after"}\n'];
    for (const line of lines) destination.write(line);
    destination.flushSync();
    expect(written()).toBe(lines.join(''));
  });

  it('writes a lone line within its flush interval', async () => {
    const { destination, written } = open({ flushMs: 20 });
    destination.write('{"lone":true}\n');
    expect(written()).toBe('');
    await new Promise((ok) => setTimeout(ok, 200));
    expect(written()).toBe('{"lone":true}\n');
  });

  it("keeps pino's lines and the request log's in the order they were logged", () => {
    const { destination, written } = open();
    const logger = pino({ base: null, timestamp: false }, destination);
    const request = requestLineWriter(logger);
    logger.info('first');
    request({
      req_id: 'r1',
      method: 'GET',
      route: '/v1/elements/:symbol',
      path: '/v1/elements/Fe',
      status: 200,
      ms: 1.5,
      key_prefix: null,
    });
    logger.warn('third');
    logger.flush();
    const messages = written()
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { msg: string; path?: string }).path ?? JSON.parse(l).msg);
    expect(messages).toEqual(['first', '/v1/elements/Fe', 'third']);
  });
});
