/**
 * The one error type of the service. Every front door turns it into its own shape (an RFC 9457
 * problem for REST), with the same stable code.
 */
export type ErrorCode =
  | 'unknown_symbol'
  | 'unknown_subject'
  | 'invalid_parameter'
  | 'not_found'
  | 'data_unavailable'
  | 'internal_error';

const STATUS: Record<ErrorCode, number> = {
  unknown_symbol: 404,
  unknown_subject: 404,
  invalid_parameter: 400,
  not_found: 404,
  data_unavailable: 503,
  internal_error: 500,
};

const TITLE: Record<ErrorCode, string> = {
  unknown_symbol: 'Unknown element symbol',
  unknown_subject: 'Unknown subject',
  invalid_parameter: 'Invalid parameter',
  not_found: 'Not found',
  data_unavailable: 'Data temporarily unavailable',
  internal_error: 'Internal error',
};

export class ServiceError extends Error {
  readonly status: number;
  readonly title: string;

  constructor(
    readonly code: ErrorCode,
    readonly detail: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(detail);
    this.status = STATUS[code];
    this.title = TITLE[code];
  }
}
