import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { BUNDLED_SAMPLE } from '../../../src/config/paths.js';

/**
 * A local stand-in for the OpenAlex API's `/works` list, on 127.0.0.1: the filters a pull sends
 * (from_updated_date, type), `select`, cursor paging (`cursor=*`, then meta.next_cursor; the last
 * page is followed by an empty one with next_cursor null, as OpenAlex does), per_page up to 200,
 * and api_key. Answers are recorded pages in the OpenAlex shape. `fault` lets a test break a
 * request (a 5xx, a 429, a cut connection) before it is answered.
 */

export type Work = Record<string, unknown>;

interface WorksRequest {
  cursor: string;
  filter: string;
  select: string | null;
  perPage: number;
  apiKey: string | null;
}

export interface FakeOpenAlex {
  url: string;
  /** The works served, in cursor order; a test may change them between pulls. */
  works: Work[];
  requests: WorksRequest[];
  /** Return true when it answered the request itself. */
  fault: ((req: WorksRequest, res: ServerResponse, n: number) => boolean) | null;
  /** Pretty-print answers (line breaks between tokens), as some proxies do. */
  pretty: boolean;
  /** Wait this long before each answer (a slow API). */
  delayMs: number;
  close(): Promise<void>;
}

/** The bundled real sample's works, as the ingest tests read them from their files. */
export function sampleWorks(): Work[] {
  return BUNDLED_SAMPLE.works.flatMap((f) =>
    gunzipSync(readFileSync(f))
      .toString('utf8')
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l) as Work),
  );
}

const encodeCursor = (offset: number) => Buffer.from(JSON.stringify({ offset })).toString('base64url');
/** The offset a cursor of this server stands for ('*': 0); null for one it never gave. */
export function decodeCursor(cursor: string): number | null {
  if (cursor === '*') return 0;
  try {
    const { offset } = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { offset: unknown };
    return typeof offset === 'number' && Number.isInteger(offset) && offset >= 0 ? offset : null;
  } catch {
    return null;
  }
}

function send(res: ServerResponse, status: number, body: unknown, pretty = false) {
  const text = pretty ? JSON.stringify(body, null, 2) : JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(text);
}

/**
 * options.apiKey: answer 401 to any other api_key. options.undatedAs: the updated_date a work
 * without one (part of the sample) is filtered as (default 2020-01-01).
 */
export async function startFakeOpenAlex(
  works: Work[],
  options: { apiKey?: string; undatedAs?: string } = {},
): Promise<FakeOpenAlex> {
  const undatedAs = options.undatedAs ?? '2020-01-01';
  const fake: FakeOpenAlex = {
    url: '',
    works,
    requests: [],
    fault: null,
    pretty: false,
    delayMs: 0,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (fake.delayMs > 0) setTimeout(() => answer(req, res), fake.delayMs);
    else answer(req, res);
  });
  const answer = (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (url.pathname !== '/works') return send(res, 404, { error: 'Not found' });
    const q = url.searchParams;
    const request: WorksRequest = {
      cursor: q.get('cursor') ?? '',
      filter: q.get('filter') ?? '',
      select: q.get('select'),
      perPage: Number(q.get('per_page') ?? 25),
      apiKey: q.get('api_key'),
    };
    fake.requests.push(request);
    if (fake.fault?.(request, res, fake.requests.length)) return;
    if (options.apiKey !== undefined && request.apiKey !== options.apiKey) {
      return send(res, 401, { error: 'Unauthorized', message: 'Invalid or missing api_key' });
    }
    let selected = fake.works;
    for (const clause of request.filter.split(',').filter(Boolean)) {
      const [key, ...rest] = clause.split(':');
      const value = rest.join(':');
      if (key === 'from_updated_date')
        selected = selected.filter(
          (w) => (typeof w.updated_date === 'string' ? w.updated_date : undatedAs) >= value,
        );
      else if (key === 'type') selected = selected.filter((w) => w.type === value);
      else {
        return send(res, 400, {
          error: 'Invalid query parameters error.',
          message: `${key} is not a valid field. Valid fields are underscore or hyphenated versions of: ...`,
        });
      }
    }
    const offset = decodeCursor(request.cursor);
    if (offset === null) return send(res, 400, { error: 'Invalid cursor', message: 'cursor is not valid' });
    if (!(request.perPage >= 1 && request.perPage <= 200))
      return send(res, 400, { error: 'per_page must be between 1 and 200' });
    const fields = request.select?.split(',') ?? null;
    const results = selected
      .slice(offset, offset + request.perPage)
      .map((w) => (fields ? Object.fromEntries(fields.map((f) => [f, w[f] ?? null])) : w));
    send(
      res,
      200,
      {
        meta: {
          count: selected.length,
          db_response_time_ms: 1,
          page: null,
          per_page: request.perPage,
          next_cursor: results.length > 0 ? encodeCursor(offset + results.length) : null,
          groups_count: null,
        },
        results,
        group_by: [],
      },
      fake.pretty,
    );
  };
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return fake;
}
