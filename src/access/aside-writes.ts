/**
 * Bookkeeping writes (a key's last_used_at) done aside the answer: the caller does not wait for
 * them and their failure is logged, never thrown. A full or failing disk (SQLITE_FULL,
 * PostgreSQL's 53100) used to turn authentication into 503 for every key not used for a minute,
 * though the key's lookup, a read, worked.
 */
import { redactPasswords, type StateLog } from './state-deadline.js';

/** Repeated failures are logged at most this often (with how many there were). */
const LOG_EVERY_MS = 10_000;

export class AsideWrites {
  private readonly pending = new Set<Promise<void>>();
  private failures = 0;
  private lastLogged = -Infinity;

  constructor(private readonly log?: StateLog) {}

  /** Runs `write` after the current turn of the event loop (the answer first). */
  run(what: string, write: () => unknown): void {
    const done = new Promise<void>((resolve) => setImmediate(resolve)).then(write).then(
      () => undefined,
      (error: unknown) => this.failed(what, error),
    );
    this.pending.add(done);
    void done.then(() => this.pending.delete(done));
  }

  /** Resolves once the writes started so far have ended (before the store closes). */
  async settled(): Promise<void> {
    await Promise.all(this.pending);
  }

  private failed(what: string, error: unknown): void {
    this.failures++;
    const now = Date.now();
    if (now - this.lastLogged < LOG_EVERY_MS) return;
    this.lastLogged = now;
    const message = error instanceof Error ? error.message.split('\n')[0]! : String(error);
    const code = (error as { code?: unknown } | null)?.code;
    this.log?.('state store: a bookkeeping write failed; answers go on without it', {
      operation: what,
      cause: redactPasswords(message),
      ...(typeof code === 'string' ? { code } : {}),
      failures: this.failures,
    });
    this.failures = 0;
  }
}
