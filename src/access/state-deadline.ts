/**
 * A deadline on every state-store call. A stalled or unreachable state store (PostgreSQL behind a
 * dead network, a locked SQLite file) must not hold a request for as long as the fault lasts, nor
 * answer 500: each call either settles within the deadline or rejects with StateUnavailableError,
 * which every front door answers as 503 `state_unavailable` with Retry-After (a paid call that
 * meets it is never settled). Connection-level failures (refused, reset, timed out, the server
 * shutting down) are the same error; application errors (an email taken, an unknown account)
 * pass through unchanged.
 *
 * One decorator for any StateStore, built as a Proxy so that methods added to the interface later
 * get the deadline without being listed here.
 */
import { ServiceError } from '../core/errors.js';
import type { StateStore } from './state-store.js';

export const DEFAULT_STATE_TIMEOUT_MS = 2000;

/** What a 503 `state_unavailable` tells the client to wait before retrying. */
const STATE_RETRY_AFTER_SECONDS = 2;

/** Repeated failures are logged at most this often (the first one and the recovery always). */
const LOG_EVERY_MS = 10_000;

/**
 * What a failing store call met, as the 503 tells the client: the disk under the store full, the
 * store out of reach (refused, reset, shutting down, not found), no answer within the deadline
 * (or a lock held past it), or another failure of its own (a disk error, out of memory).
 */
export type StateFault = 'disk_full' | 'unreachable' | 'no_answer' | 'failed';

const FAULT_TEXT: Record<StateFault, string> = {
  disk_full: "The accounts and keys store's disk is full, so it cannot record this request",
  unreachable: 'The accounts and keys store cannot be reached',
  no_answer: 'The accounts and keys store did not answer in time',
  failed: 'The accounts and keys store failed with an error of its own',
};

export class StateUnavailableError extends ServiceError {
  constructor(
    /** The store method that failed (authenticate, saveQuote, ...). */
    readonly operation: string,
    /** Why, for the log: "no answer within 2000 ms" or the driver's message (password redacted). */
    readonly reason: string,
    readonly fault: StateFault = 'no_answer',
    /**
     * How to get the answer when the failure came while a payment was being settled (its money may
     * have moved: a retry's settlement read back). Absent, nothing was charged: a request's other
     * store calls all come before its settlement, and a failure stops the call.
     */
    retryPaid?: string,
  ) {
    super(
      'state_unavailable',
      retryPaid === undefined
        ? `${FAULT_TEXT[fault]}; nothing was charged. Try again ${fault === 'disk_full' ? 'later' : 'shortly'}.`
        : `${FAULT_TEXT[fault]} while the payment was being settled; it may have been taken. ${retryPaid} to get the answer: you are charged at most once.`,
      { retry_after: STATE_RETRY_AFTER_SECONDS },
      { 'retry-after': String(STATE_RETRY_AFTER_SECONDS) },
    );
    this.name = 'StateUnavailableError';
  }

  /** The same failure met while settling a payment: says how to get the answer rather than that nothing was charged. */
  whileSettling(retry: string): StateUnavailableError {
    return new StateUnavailableError(this.operation, this.reason, this.fault, retry);
  }
}

export type StateLog = (msg: string, fields: Record<string, unknown>) => void;

export interface DeadlineOptions {
  timeoutMs: number;
  /** Where unavailability and recovery are reported (warn level); never with a password. */
  log?: StateLog;
}

/**
 * True for failures of the store itself rather than of the request: the network, the server
 * going away or refusing connections, a timeout, a busy, full or unreadable SQLite file.
 */
export function isStateUnavailable(error: unknown): boolean {
  return error instanceof StateUnavailableError || stateFault(error) !== null;
}

/** Which failure of the store itself an error is (see StateFault), or null for an error of the request. */
export function stateFault(error: unknown): StateFault | null {
  if (error instanceof StateUnavailableError) return error.fault;
  if (!(error instanceof Error)) return null;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') {
    // The disk: Node's, PostgreSQL's disk_full, SQLite's.
    if (/^(ENOSPC|EDQUOT|53100|SQLITE_FULL)$/.test(code)) return 'disk_full';
    // Node's socket errors; PostgreSQL SQLSTATE 08 connection exception, 57P01-57P05 shutdown and
    // cannot-connect-now; an SQLite file that cannot be opened.
    if (
      /^(ECONNREFUSED|ECONNRESET|ECONNABORTED|ETIMEDOUT|EPIPE|EHOSTUNREACH|ENETUNREACH|ENOTFOUND|EAI_AGAIN|08...|57P0[1-5]|SQLITE_CANTOPEN\w*)$/.test(
        code,
      )
    )
      return 'unreachable';
    // PostgreSQL 57014 query canceled (statement_timeout); SQLite: another process holds the lock.
    if (/^(57014|SQLITE_(BUSY|LOCKED|PROTOCOL)\w*)$/.test(code)) return 'no_answer';
    // PostgreSQL 53 insufficient resources, 58 system error; SQLite's disk failing or read-only.
    if (/^(53...|58...|SQLITE_(IOERR|READONLY)\w*)$/.test(code)) return 'failed';
  }
  // pg and pg-pool's own messages, which carry no code.
  if (/Query read timeout/i.test(error.message)) return 'no_answer';
  if (
    /Connection terminated|Connection ended|timeout exceeded when trying to connect|Client has encountered a connection error|Cannot use a pool after calling end|connection timeout/i.test(
      error.message,
    )
  )
    return 'unreachable';
  return /no space left on device/i.test(error.message) ? 'disk_full' : null;
}

/**
 * Wraps a store so that every method returning a promise settles within `timeoutMs`: a late or
 * unreachable store rejects with StateUnavailableError. close() is bounded too but never rejects
 * (a shutdown goes on). The wrapped store's own call keeps running; the PostgreSQL pool's
 * query_timeout and statement_timeout abandon it there (postgres-state-store.ts).
 */
export function withDeadline<T extends object>(store: T, options: DeadlineOptions): T {
  const { timeoutMs } = options;
  const health = new HealthLog(options.log);
  const wrapped = new Map<PropertyKey, unknown>();
  return new Proxy(store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== 'function' || property === 'constructor') return value;
      // One wrapper per method and function (a method replaced on the store gets a new one).
      const cached = wrapped.get(property) as { fn: unknown; wrapper: unknown } | undefined;
      if (cached?.fn === value) return cached.wrapper;
      const name = String(property);
      const wrapper = (...args: unknown[]) => {
        const result = (value as (...a: unknown[]) => unknown).apply(target, args);
        if (!isThenable(result)) return result;
        if (name === 'close') return bounded(result, timeoutMs);
        return deadline(result, timeoutMs, name, health);
      };
      wrapped.set(property, { fn: value, wrapper });
      return wrapper;
    },
  });
}

/** Any URL's password in a driver's message, for the log. */
export function redactPasswords(text: string): string {
  return text.replace(/([a-z][a-z0-9+.-]*:\/\/[^:/@\s]*:)[^@\s]*@/gi, '$1***@');
}

function isThenable(v: unknown): v is PromiseLike<unknown> {
  return typeof (v as { then?: unknown } | null)?.then === 'function';
}

function deadline(
  work: PromiseLike<unknown>,
  ms: number,
  operation: string,
  health: HealthLog,
): Promise<unknown> {
  return new Promise((resolve, reject) => {
    let done = false;
    const timer = setTimeout(() => {
      done = true;
      const error = new StateUnavailableError(operation, `no answer within ${ms} ms`);
      health.failed(error);
      reject(error);
    }, ms);
    work.then(
      (value) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        health.succeeded();
        resolve(value);
      },
      (error: unknown) => {
        if (done) return; // already answered 503; a late failure is the same outage
        done = true;
        clearTimeout(timer);
        const fault = stateFault(error);
        if (fault === null) {
          // The store answered (an application error such as an email already taken).
          health.succeeded();
          return reject(error);
        }
        const unavailable =
          error instanceof StateUnavailableError
            ? error
            : new StateUnavailableError(
                operation,
                redactPasswords((error as Error).message.split('\n')[0]!),
                fault,
              );
        health.failed(unavailable);
        reject(unavailable);
      },
    );
  });
}

/** Waits for `work` at most `ms`, then resolves anyway (its failure is not the caller's). */
function bounded(work: PromiseLike<unknown>, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    timer.unref?.();
    work.then(
      () => {
        clearTimeout(timer);
        resolve();
      },
      () => {
        clearTimeout(timer);
        resolve();
      },
    );
  });
}

/** Logs the start of an outage with its cause, a reminder now and then while it lasts, and the end. */
class HealthLog {
  private downSince: number | null = null;
  private failures = 0;
  private lastLogged = 0;

  constructor(private readonly log: StateLog | undefined) {}

  failed(error: StateUnavailableError): void {
    const now = Date.now();
    this.failures++;
    if (this.downSince === null) this.downSince = now;
    else if (now - this.lastLogged < LOG_EVERY_MS) return;
    this.lastLogged = now;
    this.log?.('state store unavailable: answering 503 state_unavailable', {
      operation: error.operation,
      cause: error.reason,
      failures: this.failures,
      since: new Date(this.downSince).toISOString(),
    });
  }

  succeeded(): void {
    if (this.downSince === null) return;
    this.log?.('state store answering again', {
      down_ms: Date.now() - this.downSince,
      failures: this.failures,
    });
    this.downSince = null;
    this.failures = 0;
  }
}

/**
 * The state store's health for /readyz: null when it answered a ping within the deadline, else
 * why not. Concurrent probes share one ping, so a stalled store does not tie up one call per probe.
 */
export function stateProbe(state: StateStore): () => Promise<string | null> {
  let inFlight: Promise<string | null> | null = null;
  return () => {
    if (inFlight) return inFlight;
    // The cause is in the log (state store unavailable); /readyz is public and does not name hosts.
    const probe = state.ping().then(
      () => null,
      () => 'the state store (accounts, keys, quotes, payments) does not answer',
    );
    inFlight = probe;
    void probe.finally(() => {
      if (inFlight === probe) inFlight = null;
    });
    return probe;
  };
}
