import { ServiceError } from '../core/errors.js';
import type { Snapshot } from '../snapshot/snapshot.js';

/**
 * No answer from a snapshot set aside (its file found damaged or changed in place, or reported
 * corrupt: SnapshotManager) is sent, whatever door or cache it would come from: a request that
 * began on it and still holds it answers 503 data_unavailable instead, uncharged. Each door checks
 * before its caches and once its answer is made (before a payment is settled); null when the
 * answer may go.
 */
export function setAsideRefusal(
  snapshot: Pick<Snapshot, 'version' | 'isSetAside'> | null | undefined,
): ServiceError | null {
  if (!snapshot?.isSetAside) return null;
  return new ServiceError(
    'data_unavailable',
    `Data version ${snapshot.version} was set aside while this request was answered: its file is being checked or replaced. Try again shortly.`,
    { data_version: snapshot.version },
    { 'retry-after': '1' },
  );
}
