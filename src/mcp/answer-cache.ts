import { constants, crc32, deflateRawSync } from 'node:zlib';
import { SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import type { Plan } from '../access/plans.js';
import { type Edition, operation, planAllows } from '../access/policy.js';
import { jsonRpcHead } from '../core/answer-text.js';
import type { ToolDef } from './tools.js';

const MAX_BYTES = 16 * 1024 * 1024;
/** Below this, identity: gzip would save less than a packet (as REST, compression.ts). */
const MIN_GZIP_BYTES = 1024;

/**
 * One kept answer: the JSON-RPC response up to its id, as identity bytes and as the start of a
 * gzip stream, so that an answer with any id is sent compressed without compressing anything.
 */
interface Entry {
  /** `{"result":...,"jsonrpc":"2.0","id":` */
  head: Buffer;
  /**
   * The head deflated and sync-flushed (byte-aligned, not final), with its CRC-32: made at the
   * first hit that takes gzip, so a call asked once costs no compression here; null when small.
   */
  gzip: { deflated: Buffer; crc: number } | null | undefined;
  /** The SDK's own answer headers (content type), lower-case. */
  headers: Record<string, string>;
  /** The data version it was answered from (a pinned read's, else the current one's). */
  version: string;
}

/** The snapshot an answer came from: its version, and whether it has been set aside since. */
interface AnsweredFrom {
  readonly version: string;
  readonly isSetAside: boolean;
}

/** A cached answer ready to send. */
export interface CachedAnswer {
  body: Buffer;
  headers: Record<string, string>;
}

/** Reads one request header (lower-case name). */
export type HeaderOf = (name: string) => string | undefined;

const GZIP_HEADER = Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff]);

/**
 * Answers of read tools, kept like REST's response cache: a repeated tools/call of a read tool
 * (same plan, tool, arguments and data version) is answered from here without building a
 * Request or a protocol server, which cost ten times the REST answer. Only calls that need no
 * payment, carry no `_meta` and name a protocol version the SDK supports; the first answer comes
 * from the SDK, so a cached answer is the SDK's own result with the new request's id. Lab tools
 * never (a quote is stored when made). Bounded by bytes; the oldest entries go first.
 *
 * Compression without compressing per request: only the id differs between answers, and it
 * comes last. The rest is deflated once and sync-flushed; a request's answer is that, then a
 * final stored block holding `<id>}`, then the CRC-32 (continued over the id) and the length: one
 * ordinary gzip member (RFC 1951 3.2.4, RFC 1952). Gzip is sent whenever the client accepts it,
 * Brotli included or not; a client that accepts only Brotli gets identity.
 */
export class McpAnswerCache {
  private readonly entries = new Map<string, Entry>();
  private bytes = 0;

  constructor(
    private readonly tools: ReadonlyMap<string, ToolDef>,
    private readonly edition: Edition,
  ) {}

  /** The cache key of a request that may be answered from the cache, else null. */
  keyOf(header: HeaderOf, body: unknown, plan: Plan | null, version: string | null): string | null {
    if (version === null || !body || typeof body !== 'object' || Array.isArray(body)) return null;
    const m = body as { jsonrpc?: unknown; method?: unknown; id?: unknown; params?: unknown };
    if (m.jsonrpc !== '2.0' || m.method !== 'tools/call') return null;
    if (typeof m.id !== 'string' && typeof m.id !== 'number') return null;
    const params = m.params as { name?: unknown; arguments?: unknown; _meta?: unknown } | undefined;
    if (!params || typeof params.name !== 'string' || params._meta !== undefined) return null;
    const tool = this.tools.get(params.name);
    if (!tool || tool.op.startsWith('lab')) return null;
    const op = operation(tool.op);
    // Free for this caller: a public tool, or a plan that includes it (never a per-call payment).
    if (op.access !== 'public' && (plan === null || !planAllows(plan, op.access, this.edition))) return null;
    const accept = header('accept') ?? '';
    if (!accept.includes('application/json') || !accept.includes('text/event-stream')) return null;
    const protocol = header('mcp-protocol-version');
    if (protocol !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(protocol)) return null;
    return `${plan}\u0000${version}\u0000${params.name}\u0000${JSON.stringify(params.arguments ?? {})}`;
  }

  /** The cached answer to this request, with its id, gzip when `gzip` and worth it. */
  answer(key: string, id: string | number, gzip: boolean): CachedAnswer | null {
    const hit = this.entries.get(key);
    if (!hit) return null;
    const tail = Buffer.from(`${JSON.stringify(id)}}`);
    if (gzip && hit.gzip === undefined) this.deflate(hit);
    if (!gzip || !hit.gzip) return { body: Buffer.concat([hit.head, tail]), headers: hit.headers };
    const stored = Buffer.allocUnsafe(5);
    stored[0] = 1; // BFINAL=1, BTYPE=00 (stored); the sync flush left the stream byte-aligned
    stored.writeUInt16LE(tail.length, 1);
    stored.writeUInt16LE(~tail.length & 0xffff, 3);
    const trailer = Buffer.allocUnsafe(8);
    trailer.writeUInt32LE(crc32(tail, hit.gzip.crc), 0);
    trailer.writeUInt32LE((hit.head.length + tail.length) >>> 0, 4);
    return {
      body: Buffer.concat([GZIP_HEADER, hit.gzip.deflated, stored, tail, trailer]),
      headers: { ...hit.headers, 'content-encoding': 'gzip' },
    };
  }

  /** Keeps a tool's result (not an error, no receipt) answered `from` a snapshot, given as its JSON text. */
  keepResult(key: string, json: string, from: AnsweredFrom): void {
    this.store(key, entryOfJson(json, { 'content-type': 'application/json' }, from.version), from);
  }

  /** Keeps the SDK's answer `from` a snapshot when it is a result (not an error); returns an answer to send. */
  async keep(key: string, response: Response, from: AnsweredFrom): Promise<Response> {
    if (
      response.status !== 200 ||
      !(response.headers.get('content-type') ?? '').startsWith('application/json')
    )
      return response;
    const text = await response.text();
    const headers = Object.fromEntries(response.headers);
    try {
      const message = JSON.parse(text) as { result?: { isError?: boolean } };
      if (message.result && !message.result.isError)
        this.store(key, entry(message.result, headers, from.version), from);
    } catch {
      // not JSON after all: answered as it is, not kept
    }
    return new Response(text, { status: 200, headers });
  }

  /** Drops every answer from `version` (its snapshot set aside, or no longer kept). */
  forget(version: string): void {
    for (const [key, e] of this.entries)
      if (e.version === version) {
        this.entries.delete(key);
        this.bytes -= key.length + sizeOf(e);
      }
  }

  private deflate(e: Entry): void {
    const before = sizeOf(e);
    e.gzip =
      e.head.length < MIN_GZIP_BYTES
        ? null
        : {
            deflated: deflateRawSync(e.head, { level: 6, finishFlush: constants.Z_SYNC_FLUSH }),
            crc: crc32(e.head),
          };
    this.bytes += sizeOf(e) - before;
  }

  private store(key: string, e: Entry, from: AnsweredFrom): void {
    // Set aside since it answered (forget() has run for its version): not kept.
    if (from.isSetAside) return;
    const size = key.length + sizeOf(e);
    if (size > MAX_BYTES / 16) return;
    const old = this.entries.get(key);
    if (old) {
      this.entries.delete(key);
      this.bytes -= key.length + sizeOf(old);
    }
    for (const [k, x] of this.entries) {
      if (this.bytes + size <= MAX_BYTES) break;
      this.entries.delete(k);
      this.bytes -= k.length + sizeOf(x);
    }
    this.entries.set(key, e);
    this.bytes += size;
  }
}

function entry(result: unknown, headers: Record<string, string>, version: string): Entry {
  return entryOfJson(JSON.stringify(result), headers, version);
}

function entryOfJson(result: string, headers: Record<string, string>, version: string): Entry {
  const head = Buffer.from(jsonRpcHead(result));
  const { 'content-length': _length, 'content-encoding': _encoding, ...own } = headers;
  return { head, gzip: undefined, headers: { ...own, vary: 'Accept-Encoding' }, version };
}

const sizeOf = (e: Entry) => e.head.length + (e.gzip?.deflated.length ?? 0);
