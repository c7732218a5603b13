import { createHash } from 'node:crypto';
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { editionDescriptions } from '../access/edition-text.js';
import {
  type AccessLevel,
  OPERATIONS,
  type Operation,
  operation,
  planLadder,
  requiredPlan,
} from '../access/policy.js';
import { DATA_VERSION } from '../contracts/data-version.js';
import { getElement, listElements } from '../core/elements.js';
import { ServiceError } from '../core/errors.js';
import { elementHistories, elementHistory, subjectHistory } from '../core/history.js';
import { elementPapers, subjectPapers } from '../core/papers.js';
import { getSubject, searchSubjects, subjectElements } from '../core/subjects.js';
import { listVersions } from '../core/versions.js';
import { viewerFor } from '../core/viewer.js';
import { accessText, PRICED_OPERATIONS, paymentInfo } from '../payments/discovery.js';
import type { PaymentService } from '../payments/payment-service.js';
import type { Snapshot, SnapshotManager } from '../snapshot/snapshot.js';
import { chooseEncoding, MIN_COMPRESS_BYTES } from '../util/compression.js';
import type { AppEnv } from './context.js';
import { DATA_VERSION_HEADER } from './data-version.js';
import { encodedEtag } from './fast-path/compression.js';
import { notModified } from './fast-path/response-cache.js';
import type { RouteDeps } from './routes/shared.js';

/**
 * The machine-readable reference at /v1/openapi.json, generated from the route schemas:
 * OpenAPI 3.0.3, info.version 1.0.0, one HTTP bearer scheme required by default; the two
 * public element routes accept no credentials or the bearer. With per-call payments on, every
 * priced operation carries x-payment-info and documents its 402.
 */
export function registerOpenApi(
  app: OpenAPIHono<AppEnv>,
  deps: RouteDeps,
  payments: PaymentService | undefined,
  snapshots?: SnapshotManager,
): void {
  app.openAPIRegistry.registerComponent('securitySchemes', 'bearer', {
    type: 'http',
    scheme: 'bearer',
    description: 'An API key: Authorization: Bearer <API_KEY>',
  });

  // The same document until the data served or the networks offered change: made once for each,
  // its ETag from its bytes.
  let kept: { key: string; body: string; etag: string } | null = null;
  app.get('/openapi.json', async (c) => {
    if (payments?.enabled) await payments.ready();
    const snapshot = snapshots?.acquire();
    let current: { key: string; body: string; etag: string };
    try {
      const key = `${snapshot?.version ?? ''}|${payments?.enabled ? payments.offeredNow.join(',') : ''}`;
      if (kept?.key !== key) {
        const body = JSON.stringify(openApiDocument(app, deps, payments, snapshot));
        const hash = createHash('sha256').update(body).digest('base64url').slice(0, 22);
        kept = { key, body, etag: `W/"${hash}"` };
      }
      current = kept;
    } finally {
      snapshot?.release();
    }
    return conditional(c, current.body, current.etag);
  });
}

/**
 * The document as served: with Cache-Control and its ETag, or 304 when If-None-Match names the
 * representation this request would get (each encoding has its own ETag: compression.ts).
 */
function conditional(c: Context, body: string, etag: string): Response {
  const encoding =
    Buffer.byteLength(body) >= MIN_COMPRESS_BYTES ? chooseEncoding(c.req.header('accept-encoding')) : null;
  const tag = encoding ? encodedEtag(etag, encoding) : etag;
  const caching = { 'cache-control': 'public, max-age=300', vary: 'Accept-Encoding' };
  if (notModified(c, tag)) return c.body(null, 304, { ...caching, etag: tag });
  return c.body(body, 200, { ...caching, etag, 'content-type': 'application/json' });
}

/** The OpenAPI document, with the examples of the answers from `snapshot` when there is one. */
function openApiDocument(
  app: OpenAPIHono<AppEnv>,
  deps: RouteDeps,
  payments: PaymentService | undefined,
  snapshot: Snapshot | null | undefined,
) {
  const doc = app.getOpenAPIDocument({
    openapi: '3.0.3',
    info: {
      title: 'Research-Intensity Data Service',
      version: '1.0.0',
      description: `RI, RIS and HRI for the 118 elements and for research topics and keywords. Plans: ${planLadder(deps.edition).join(', ')}.`,
      contact: { name: 'Plans and keys', url: `${deps.publicUrl}/pricing` },
      license: { name: 'Plans and terms of use', url: `${deps.publicUrl}/pricing` },
    },
    // Only the tags of operations this edition serves (the older has no research and no lab).
    tags: TAGS.filter((t) => OPERATIONS.some((op) => tagOf(op) === t.name && servedIn(op, deps.edition))),
    servers: [{ url: `${deps.publicUrl}/v1` }],
    security: [{ bearer: [] }],
  });
  // Access level per operation from the policy table (defineRoute set its security).
  for (const op of OPERATIONS) {
    const item = doc.paths?.[op.path]?.[op.method.toLowerCase() as 'get' | 'post'];
    if (!item) continue;
    (item as unknown as Record<string, unknown>)['x-access'] = accessIn(op.access, deps.edition);
    item.tags = [tagOf(op)];
    item.description = `${op.description}. ${accessText(op, deps.edition, Boolean(payments?.enabled))}`;
    // Pay per call: the terms' shape (from the price table) and the 402 answer.
    if (payments?.enabled && PRICED_OPERATIONS.includes(op)) {
      (item as unknown as Record<string, unknown>)['x-payment-info'] = paymentInfo(op, payments.offeredNow);
      item.responses['402'] = {
        description:
          'No key and no payment (payment_required), or a payment not accepted (payment_invalid, payment_terms_mismatch, payment_replayed, settlement_failed): the x402 terms are in the PAYMENT-REQUIRED header',
        headers: {
          'PAYMENT-REQUIRED': {
            description: 'base64 JSON of the x402 v2 PaymentRequired',
            schema: { type: 'string' },
          },
        },
        content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
      };
      item.responses['409'] ??= {
        description:
          'The payment-identifier sent was already used with another payment (payment_id_conflict); nothing was charged',
        content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
      };
    }
  }
  // A read that takes data_version= takes it as a header too (read before the route: data-version.ts),
  // and answers 410 for a version no longer kept.
  for (const item of Object.values(doc.paths ?? {})) {
    const get = item.get;
    const params = get?.parameters as { name?: string; in?: string }[] | undefined;
    if (!get || !params?.some((p) => p.in === 'query' && p.name === 'data_version')) continue;
    params.push({
      name: DATA_VERSION_HEADER,
      in: 'header',
      required: false,
      schema: { type: 'string', pattern: DATA_VERSION.source },
      description: 'The same as the data_version parameter (give one, or both equal)',
    } as { name: string; in: string });
    get.responses['410'] = {
      description:
        'That data version is no longer kept (data_version_gone; current_version names the current one)',
      content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
    };
  }
  withoutBareNullable(doc);
  jsonAnswers(doc);
  rangedAnswers(doc);
  // The descriptions are written for the full edition: the older one names its plan, Enterprise.
  editionDescriptions(doc, deps.edition);
  // The free answers' examples, from the data served now (what "Try it out" then answers).
  if (snapshot) {
    for (const [key, example] of Object.entries(answerExamples(snapshot, deps))) {
      const [method, path] = key.split(' ') as ['get', string];
      const json = doc.paths?.[path]?.[method]?.responses['200'] as
        | { content?: Record<string, { example?: unknown }> }
        | undefined;
      const content = json?.content?.['application/json'];
      if (content) content.example = example;
    }
  }
  // The body a lab quote is tried with (a query the bundled sample matches); a run needs a real
  // quote_id, which no example can give.
  const quoteBody = doc.paths?.['/lab/quote']?.post?.requestBody as
    | { content: Record<string, { example?: unknown }> }
    | undefined;
  const quoteJson = quoteBody?.content['application/json'];
  if (quoteJson) quoteJson.example = { query: 'perovskite -Pb year:2020..' };
  return doc;
}

/**
 * Examples of the answers, from `snapshot` (once per snapshot): the answers to the parameter
 * examples (Fe; Fe,Ni,Co; T10030; "oxygen evolution"), histories cut to their last three periods
 * and paper lists to their first paper. One whose example subject this data lacks is left out.
 */
function answerExamples(snapshot: Snapshot, deps: RouteDeps): Record<string, unknown> {
  return snapshot.memoize('openapi:examples', () => {
    const anonymous = viewerFor(null, deps.edition, deps.publicUrl);
    const free = viewerFor('free', deps.edition, deps.publicUrl);
    const personal = viewerFor('personal', deps.edition, deps.publicUrl);
    const lastPeriods = <T extends { series: unknown[] }>(h: T) => ({ ...h, series: h.series.slice(-3) });
    const firstPaper = <T extends { papers: unknown[] }>(a: T) => ({ ...a, papers: a.papers.slice(0, 1) });
    const papers = { sort: 'impact' as const, limit: 20 };
    const examples: Record<string, () => unknown> = {
      'get /elements': () => listElements(snapshot, anonymous, ['Fe', 'Ni', 'Co']),
      'get /elements/{symbol}': () => getElement(snapshot, 'Fe', anonymous),
      'get /elements/{symbol}/history': () => lastPeriods(elementHistory(snapshot, 'Fe', 'yearly', free)),
      'get /elements/history': () => {
        const h = elementHistories(snapshot, ['Fe', 'Ni'], 'yearly', free);
        return { ...h, histories: h.histories.map(lastPeriods) };
      },
      'get /elements/{symbol}/papers': () => firstPaper(elementPapers(snapshot, 'Fe', papers, personal)),
      'get /subjects/search': () => searchSubjects(snapshot, 'oxygen evolution', free),
      'get /subjects/{subject_type}/{subject_id}': () => getSubject(snapshot, 'topic', 'T10030', personal),
      'get /subjects/{subject_type}/{subject_id}/history': () =>
        lastPeriods(subjectHistory(snapshot, 'topic', 'T10030', 'yearly', personal)),
      'get /subjects/{subject_type}/{subject_id}/elements': () =>
        subjectElements(snapshot, 'topic', 'T10030', personal),
      'get /subjects/{subject_type}/{subject_id}/papers': () =>
        firstPaper(subjectPapers(snapshot, 'topic', 'T10030', papers, personal)),
      'get /versions': () => listVersions(snapshot, deps.snapshotDir, anonymous),
    };
    const made: Record<string, unknown> = {};
    for (const [key, make] of Object.entries(examples)) {
      try {
        made[key] = make();
      } catch (e) {
        if (!(e instanceof ServiceError)) throw e;
      }
    }
    return made;
  });
}

/** The operations grouped by what they are about (the first segment of their path). */
const TAGS = [
  { name: 'elements', description: 'The 118 elements: current scores, histories, changes, top papers' },
  {
    name: 'subjects',
    description: 'Research topics and keywords: search, scores, histories, changes, elements, top papers',
  },
  { name: 'research', description: 'A question or a paper to research communities and reading lists' },
  { name: 'lab', description: 'Filtered paper lists: a binding quote, then the run' },
  { name: 'versions', description: 'The data versions kept, for pinned reads' },
  {
    name: 'exports',
    description:
      'Whole tables as files, per kept data version: elements and subjects, scores and yearly history, Parquet and gzip CSV',
  },
  {
    name: 'changes',
    description: 'What moved per subject at each publication (one subject: under elements and subjects)',
  },
  {
    name: 'feeds',
    description:
      'The changes as Atom feeds for feed readers: an element, a subject, a set of subjects, what rose most',
  },
  {
    name: 'badges',
    description:
      "SVG badges to embed in a page: an element's or subject's current RIS, and its yearly sparkline",
  },
];

function tagOf(op: Operation): string {
  return op.path.split('/')[1]!;
}

const servedIn = (op: Operation, edition: RouteDeps['edition']) => edition === 'full' || !op.fullEditionOnly;

/** x-access as the edition names it: a plan tier is the plan that opens it (the older edition: enterprise). */
function accessIn(level: AccessLevel, edition: RouteDeps['edition']): string {
  return level === 'public' || level === 'key' ? level : requiredPlan(level, edition);
}

/**
 * The 200 of every operation is its JSON answer alone: a client generated from the document
 * (openapi-typescript, openapi-fetch) types an answer as the union of the media types listed, so a
 * CSV beside the JSON made every tabular read `T | string`. The CSV form (format=csv, or Accept:
 * text/csv) is documented as its own alternative: the 200's x-alternative-content.
 */
function jsonAnswers(doc: { paths?: Record<string, object> }): void {
  for (const item of Object.values(doc.paths ?? {}))
    for (const op of Object.values(item) as { responses?: Record<string, Record<string, unknown>> }[]) {
      const ok = op.responses?.['200'];
      const content = ok?.content as Record<string, unknown> | undefined;
      if (!ok || !content?.['application/json']) continue;
      const { 'application/json': json, ...alternatives } = content;
      if (Object.keys(alternatives).length === 0) continue;
      ok.content = { 'application/json': json };
      ok['x-alternative-content'] = alternatives;
    }
}

/**
 * An export file's 206: the part a Range request asked for, of the same media types as its 200,
 * with the Content-Range that places it in the whole.
 */
function rangedAnswers(doc: { paths?: Record<string, object> }): void {
  const item = doc.paths?.[operation('getExportFile').path] as
    | { get?: { responses: Record<string, unknown> } }
    | undefined;
  const file = item?.get;
  const ok = file?.responses['200'] as { content?: unknown } | undefined;
  if (!file || !ok) return;
  file.responses['206'] = {
    description: 'The bytes a Range request asked for (Range: bytes=N-, bytes=N-M or bytes=-N)',
    headers: {
      'Content-Range': { description: 'bytes <first>-<last>/<size>', schema: { type: 'string' } },
    },
    content: ok.content,
  };
}

/**
 * "Any value" as zod-to-openapi writes it ({nullable: true} with no type, as for z.unknown())
 * made plain {}: OpenAPI 3.0 gives nullable a meaning only beside a type.
 */
function withoutBareNullable(node: unknown): void {
  if (Array.isArray(node)) {
    for (const item of node) withoutBareNullable(item);
    return;
  }
  if (!node || typeof node !== 'object') return;
  const o = node as Record<string, unknown>;
  if (
    o.nullable === true &&
    !('type' in o) &&
    !('$ref' in o) &&
    !('allOf' in o) &&
    !('oneOf' in o) &&
    !('anyOf' in o)
  )
    delete o.nullable;
  for (const value of Object.values(o)) withoutBareNullable(value);
}
