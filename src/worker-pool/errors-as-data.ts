import { ServiceError } from '../core/errors.js';

/** A ServiceError as data (a worker's errors cross the thread as plain objects). */
export interface ServiceErrorData {
  serviceError: {
    code: ServiceError['code'];
    detail: string;
    extra: Record<string, unknown>;
    headers: Record<string, string>;
  };
}

export const toData = (e: ServiceError): ServiceErrorData => ({
  serviceError: { code: e.code, detail: e.detail, extra: e.extra, headers: e.headers },
});

export const fromData = (d: ServiceErrorData['serviceError']): ServiceError =>
  new ServiceError(d.code, d.detail, d.extra, d.headers);

/**
 * Any other error of a task, as data. Thrown as it is, it would cross the thread as a plain
 * object (a SqliteError loses its class and message), which the HTTP layer cannot answer.
 */
export interface WorkerFailureData {
  workerFailure: { message: string; code?: string; stack?: string };
}

export function toFailureData(e: unknown): WorkerFailureData {
  const err = e as { message?: unknown; code?: unknown; stack?: unknown } | null;
  return {
    workerFailure: {
      message: typeof err?.message === 'string' ? err.message : String(e),
      ...(typeof err?.code === 'string' ? { code: err.code } : {}),
      ...(typeof err?.stack === 'string' ? { stack: err.stack } : {}),
    },
  };
}
