import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { handleError } from '../../../src/http/problem.js';

describe('a client that hangs up mid-request', () => {
  it('is answered 400 bad_request and not logged as a failure; a real fault still is', async () => {
    const logged: string[] = [];
    const app = new Hono();
    app.get('/gone', () => {
      throw new Error('aborted');
    });
    app.get('/reset', () => {
      throw Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
    });
    app.get('/fault', () => {
      throw new Error('boom');
    });
    app.onError((e, c) => handleError(e, c, (err) => logged.push(err.message)));
    for (const path of ['/gone', '/reset']) {
      const r = await app.request(path);
      expect(r.status).toBe(400);
      expect(((await r.json()) as { code: string }).code).toBe('bad_request');
    }
    expect(logged).toEqual([]);
    expect((await app.request('/fault')).status).toBe(500);
    expect(logged).toEqual(['boom']);
  });
});
