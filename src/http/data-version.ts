import type { Context } from 'hono';
import { DATA_VERSION_FORM, type DataVersion, isDataVersion } from '../contracts/data-version.js';
import { ServiceError } from '../core/errors.js';

/** The request header that pins a read to a data version, like the data_version= parameter. */
export const DATA_VERSION_HEADER = 'RI-Data-Version';

/**
 * Answers that cannot be pinned: a lab quote is bound to the data_version it was quoted on (a run
 * of it on other data is quote_stale), the list of versions is always today's, the OpenAPI
 * document describes the API served now, and an export file names its version in its path.
 */
function pinnable(path: string): boolean {
  return (
    !path.startsWith('/v1/lab/') &&
    path !== '/v1/versions' &&
    path !== '/v1/openapi.json' &&
    // An export file names its data version in its path.
    !path.startsWith('/v1/exports/')
  );
}

/**
 * The data version a read asks for with data_version= or the RI-Data-Version header, or null for
 * the current one. A value that is not a data_version, or two that differ: 400 invalid_parameter.
 */
export function requestedVersion(c: Context): DataVersion | null {
  // Most reads pin nothing: the query is parsed only when the name is in the URL.
  const query = c.req.url.includes('data_version') ? (c.req.query('data_version') ?? null) : null;
  const header = c.req.header(DATA_VERSION_HEADER) ?? null;
  if (query === null && header === null) return null;
  const parameter = query !== null ? 'data_version' : DATA_VERSION_HEADER;
  if (!pinnable(c.req.path))
    throw new ServiceError(
      'invalid_parameter',
      `${parameter}: this endpoint answers from the current data only` +
        `${c.req.path.startsWith('/v1/lab/') ? ' (a lab quote is bound to the data_version it was quoted on)' : ''}.`,
      { parameter },
    );
  for (const [name, value] of [
    ['data_version', query],
    [DATA_VERSION_HEADER, header],
  ] as const)
    if (value !== null && !isDataVersion(value))
      throw new ServiceError(
        'invalid_parameter',
        `Parameter '${name}': must be a data_version, ${DATA_VERSION_FORM} as in an answer's data_version.`,
        { parameter: name },
      );
  if (query !== null && header !== null && query !== header)
    throw new ServiceError(
      'invalid_parameter',
      `data_version=${query} and ${DATA_VERSION_HEADER}: ${header} name different versions; give one.`,
      { parameter: DATA_VERSION_HEADER },
    );
  return query ?? header;
}
