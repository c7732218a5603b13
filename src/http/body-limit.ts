import type { IncomingMessage } from 'node:http';
import type { Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { ServiceError } from '../core/errors.js';
import { beforeNext, type Middleware } from './middleware.js';

/**
 * Every request body bounded before anything reads it, on every route (the account forms, /mcp,
 * the /v1 POSTs, any other): one whose Content-Length says more than `max` bytes is refused 413
 * at once, unread; a chunked one is read here up to `max` and refused as soon as it goes past,
 * the rest never held (the server drops it, server-limits.ts). Why: the account forms were read
 * whole, before their CSRF check and with no key or session, and four 100 MB posts took a
 * replica from 130 to 895 MB and stalled its cached reads.
 *
 * GET and HEAD are let through untouched (no route reads their body, and the fast path's cached
 * reads pay nothing here).
 */
export function boundedBody(max: number): Middleware {
  const tooLarge = () =>
    new ServiceError('payload_too_large', `The request body is larger than ${max} bytes.`);
  // A request that is not Node's (app.request in tests): Hono's limit over its stream.
  const fetchRequest = beforeNext(
    bodyLimit({
      maxSize: max,
      onError: () => {
        throw tooLarge();
      },
    }),
  );
  return {
    enter(c) {
      const method = c.req.method;
      if (method === 'GET' || method === 'HEAD') return undefined;
      const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
      if (!incoming) return fetchRequest.enter!(c as Context);
      const declared = incoming.headers['content-length'];
      // Node's parser holds the body to its Content-Length, so the header is the body's size.
      if (declared !== undefined) {
        if (Number(declared) > max) throw tooLarge();
        return undefined;
      }
      if (incoming.headers['transfer-encoding'] === undefined) return undefined;
      return readUpTo(incoming, max, tooLarge).then((body) => {
        // Where @hono/node-server takes a body already read (its Request, text(), formData()),
        // and readBody (mcp/body.ts) too.
        (incoming as IncomingMessage & { rawBody?: Buffer }).rawBody = body;
        return undefined;
      });
    },
  };
}

/** A chunked body, read until its end or until it passes `max` bytes (then the reading stops). */
function readUpTo(incoming: IncomingMessage, max: number, tooLarge: () => Error): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const stop = () => {
      incoming.off('data', onData);
      incoming.off('end', onEnd);
      incoming.off('error', onError);
      incoming.off('close', onClose);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= max) {
        chunks.push(chunk);
        return;
      }
      stop();
      incoming.pause();
      reject(tooLarge());
    };
    const onEnd = () => {
      stop();
      resolve(Buffer.concat(chunks, size));
    };
    const onError = (error: Error) => {
      stop();
      reject(error);
    };
    // The client went away mid-body (handleError's clientWentAway: not a fault of the service).
    const onClose = () => {
      stop();
      reject(Object.assign(new Error('aborted'), { code: 'ECONNRESET' }));
    };
    incoming.on('data', onData);
    incoming.on('end', onEnd);
    incoming.on('error', onError);
    incoming.on('close', onClose);
  });
}
