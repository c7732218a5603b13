/**
 * The one error type of the service. Every front door turns it into its own shape (an RFC 9457
 * problem for REST), with the same stable code.
 */
const ERRORS = {
  unknown_symbol: { status: 404, title: 'Unknown element symbol' },
  unknown_subject: { status: 404, title: 'Unknown subject' },
  invalid_parameter: { status: 400, title: 'Invalid parameter' },
  // Node's own refusals, before the app sees the request (server-limits.ts).
  bad_request: { status: 400, title: 'Bad request' },
  request_timeout: { status: 408, title: 'Request timeout' },
  headers_too_large: { status: 431, title: 'Request headers too large' },
  host_required: { status: 400, title: 'Host header required' },
  expectation_failed: { status: 417, title: 'Expectation failed' },
  not_found: { status: 404, title: 'Not found' },
  method_not_allowed: { status: 405, title: 'Method not allowed' },
  nothing_matched: { status: 404, title: 'Nothing matched' },
  unknown_paper: { status: 404, title: 'Unknown paper' },
  page_out_of_range: { status: 404, title: 'Page past the last' },
  unusable_query: { status: 400, title: 'Unusable lab query' },
  unknown_quote: { status: 404, title: 'Unknown quote' },
  quote_expired: { status: 410, title: 'Quote expired' },
  data_version_gone: { status: 410, title: 'Data version no longer kept' },
  // since= names no data version the changes asked of follow.
  unknown_data_version: { status: 404, title: 'Unknown data version' },
  // A whole-table export the data version does not have (or has not been written yet).
  unknown_export: { status: 404, title: 'Unknown export file' },
  range_not_satisfiable: { status: 416, title: 'Range not satisfiable' },
  quote_stale: { status: 409, title: 'Quote stale' },
  quote_edited: { status: 400, title: 'Quote edited' },
  licence_required: { status: 403, title: 'Licence required' },
  depth_not_offered: { status: 400, title: 'Depth not offered by the quote' },
  authentication_required: { status: 401, title: 'Authentication required' },
  invalid_key: { status: 401, title: 'Invalid API key' },
  // token= on a feed's URL that is not a live feed token (an API key never is one).
  invalid_feed_token: { status: 401, title: 'Invalid feed token' },
  plan_required: { status: 403, title: 'Plan required' },
  // Webhooks (src/webhooks): a URL they are not sent to, a plan's number of subscriptions reached, an id not the account's.
  webhook_url_refused: { status: 400, title: 'Webhook URL refused' },
  subscription_limit: { status: 403, title: 'Subscription limit reached' },
  unknown_subscription: { status: 404, title: 'Unknown subscription' },
  payload_too_large: { status: 413, title: 'Request body too large' },
  uri_too_long: { status: 414, title: 'URI too long' },
  rate_limited: { status: 429, title: 'Too many requests' },
  payment_required: { status: 402, title: 'Payment required' },
  payment_invalid: { status: 402, title: 'Payment not accepted' },
  // The payment was signed for other terms (amount, address, validity, resource): refused before settlement.
  payment_terms_mismatch: { status: 402, title: 'Payment not for these terms' },
  payment_replayed: { status: 402, title: 'Payment already used' },
  settlement_failed: { status: 402, title: 'Payment could not be settled' },
  payment_id_conflict: { status: 409, title: 'Payment identifier already used' },
  payment_unavailable: { status: 503, title: 'Payments temporarily unavailable' },
  // The facilitator has not said whether the payment moved: the same request with the same payment gets the answer.
  settlement_pending: { status: 503, title: 'Payment being settled' },
  data_unavailable: { status: 503, title: 'Data temporarily unavailable' },
  state_unavailable: { status: 503, title: 'Accounts and keys temporarily unavailable' },
  overloaded: { status: 503, title: 'Too busy: try again shortly' },
  worker_unavailable: { status: 503, title: 'Research and lab temporarily unavailable' },
  // nginx's own answer (deploy/nginx.conf) when no replica answers.
  service_unavailable: { status: 503, title: 'Service temporarily unavailable' },
  internal_error: { status: 500, title: 'Internal error' },
} as const satisfies Record<string, { status: number; title: string }>;

type ErrorCode = keyof typeof ERRORS;

/** Every code with its status and title (for the /docs/errors page). */
export const ERROR_CODES = Object.entries(ERRORS).map(([code, e]) => ({
  code,
  status: e.status,
  title: e.title,
}));

export class ServiceError extends Error {
  readonly status: number;
  readonly title: string;

  constructor(
    readonly code: ErrorCode,
    readonly detail: string,
    readonly extra: Record<string, unknown> = {},
    /** Response headers the error needs (WWW-Authenticate, Retry-After). */
    readonly headers: Record<string, string> = {},
  ) {
    // No stack: a ServiceError is an answer, never logged as a fault, and capturing one was a
    // tenth of an unpaid 402's cost.
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(detail);
    Error.stackTraceLimit = limit;
    this.status = ERRORS[code].status;
    this.title = ERRORS[code].title;
  }
}
