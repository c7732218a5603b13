import pino from 'pino';

/** What pino writes to (its stream): lines in, flushed on demand. */
export interface LogDestination {
  write(line: string): void;
  /** Writes out what is held, then calls back (pino's logger.flush()). */
  flush(done?: (error?: Error) => void): void;
  /** Writes out what is held, before returning. */
  flushSync(): void;
  /** Writes out what is held and stops the timer and the flush on exit. */
  close(): void;
}

export interface LogDestinationOptions {
  /** The file descriptor written to. Default 1 (stdout). */
  fd?: number;
  /** Lines are held until they reach this many bytes... Default 32 KiB. */
  minLength?: number;
  /** ...or for at most this long. Default 100 ms. */
  flushMs?: number;
}

/**
 * The service's log on stdout: lines held in memory and written together once they reach 32 KiB
 * (about 140 request lines) or every 100 ms, whichever comes first, each time in one synchronous
 * write(2) by pino's own destination (which also stops writing on a closed pipe). What is held
 * when the process exits (a signal, process.exit, an uncaught error) is written then; only a
 * SIGKILL loses it. Every line goes through here, pino's and the request log's, so their order
 * is kept. A stdout slower than the log (a full pipe) slows the service down rather than filling
 * its memory.
 *
 * Why not pino's destination with its own `minLength`: it measures its whole pending string with
 * Buffer.byteLength on every line (sonic-boom 4.2.1 and 5.0.2), which copies and scans up to 4 KiB
 * per request. Why synchronous writes: an asynchronous one is a trip through libuv's thread pool
 * (a worker woken, then the event loop), whose cost in CPU time exceeded the write's own. Both
 * were measured on cached reads (CPU per request, docs/operations.md).
 */
export function logDestination(options: LogDestinationOptions = {}): LogDestination {
  const minLength = options.minLength ?? 32 * 1024;
  // Lines are encoded once, into one buffer, and pino's destination writes its bytes as they are
  // (a string would be joined, measured and encoded again, three passes over every byte).
  const out = pino.destination({ dest: options.fd ?? 1, sync: true, contentMode: 'buffer' });
  const held = Buffer.allocUnsafe(Math.max(64 * 1024, 2 * minLength));
  let length = 0;
  const flushSync = () => {
    if (length === 0) return;
    const chunk = held.subarray(0, length);
    length = 0;
    // Written before write() returns (synchronous), so the buffer is free again. (Its types know
    // only strings; in buffer mode it takes bytes.)
    out.write(chunk as unknown as string);
  };
  const timer = setInterval(flushSync, options.flushMs ?? 100).unref();
  const onExit = () => {
    try {
      flushSync();
    } catch {
      // stdout is gone: nothing can be written any more.
    }
  };
  process.once('exit', onExit);
  return {
    write(line) {
      // UTF-8 takes at most three bytes per UTF-16 unit.
      if (length + 3 * line.length > held.length) {
        flushSync();
        // A line longer than the buffer goes out on its own, rather than growing the buffer for good.
        if (3 * line.length > held.length) {
          out.write(Buffer.from(line) as unknown as string);
          return;
        }
      }
      length += held.write(line, length);
      if (length >= minLength) flushSync();
    },
    flush(done) {
      try {
        flushSync();
      } catch (error) {
        done?.(error as Error);
        return;
      }
      done?.();
    },
    flushSync,
    close() {
      onExit();
      clearInterval(timer);
      process.removeListener('exit', onExit);
    },
  };
}
