import type { IncomingMessage } from 'node:http';
import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';

/**
 * The body of an MCP POST, read once with a size limit. Under @hono/node-server it is read from
 * the Node request itself: going through c.req.raw would make the adapter build a full WHATWG
 * Request and stream, most of the cost of a small tool call. Throws 413 past `max` bytes.
 */
export async function readBody(c: Context, max: number): Promise<string> {
  const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
  if (!incoming) {
    const text = await c.req.text();
    if (Buffer.byteLength(text) > max) throw new HTTPException(413);
    return text;
  }
  // A chunked body the app's body limit has read already (http/body-limit.ts).
  const read = (incoming as IncomingMessage & { rawBody?: unknown }).rawBody;
  if (read instanceof Buffer) {
    if (read.length > max) throw new HTTPException(413);
    return read.toString('utf8');
  }
  const declared = Number(incoming.headers['content-length']);
  if (declared > max) throw new HTTPException(413);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of incoming as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > max) throw new HTTPException(413);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size).toString('utf8');
}
