import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { operation } from '../../../src/access/policy.js';
import { StateUnavailableError } from '../../../src/access/state-deadline.js';
import { type CallRequest, OperationCall } from '../../../src/calls/operation-call.js';
import { ServiceError } from '../../../src/core/errors.js';
import type { PaymentService } from '../../../src/payments/payment-service.js';
import { type Snapshot, SnapshotManager } from '../../../src/snapshot/snapshot.js';
import { sampleDataDir } from '../../helpers/sample.js';

/** The runner both doors use (REST's steps call its phases; MCP runs it whole). */
describe('OperationCall: access, pin, work, finish, in that order', () => {
  let snapshots: SnapshotManager;
  let version: string;
  const log = vi.fn();

  beforeAll(async () => {
    const sample = await sampleDataDir();
    version = sample.version;
    snapshots = new SnapshotManager(sample.snapshots);
    await snapshots.start();
  });
  afterAll(() => snapshots.stop());

  const request = (over: Partial<CallRequest> = {}): CallRequest => ({
    payment: undefined,
    terms: {},
    what: 'The tool x',
    retry: 'again',
    resource: () => ({ operation: 'x', url: 'https://ri.example/mcp', description: 'x' }),
    ...over,
  });
  const deps = () => ({
    snapshots,
    edition: 'full' as const,
    publicUrl: 'https://ri.example',
    payments: undefined,
    log,
  });
  const call = (id: Parameters<typeof operation>[0], plan: 'free' | 'personal' | null, over = {}) =>
    new OperationCall(deps(), operation(id), plan, request(over));

  it('refuses a caller below the level before the arguments are read or a snapshot is taken', async () => {
    const prepare = vi.fn(() => ({ input: {}, version: null }));
    const acquire = vi.spyOn(snapshots, 'acquire');
    const outcome = await call('getSubject', null).run(prepare, async () => 'never');
    expect((outcome.error as ServiceError).code).toBe('authentication_required');
    expect(prepare).not.toHaveBeenCalled();
    expect(acquire).not.toHaveBeenCalled();
    acquire.mockRestore();
  });

  it('a resolution above the plan is refused naming it', async () => {
    const outcome = await call('getElementHistory', 'free', { terms: { resolution: 'monthly' } }).run(
      () => ({ input: {}, version: null }),
      async () => 'never',
    );
    expect(outcome.error).toBeInstanceOf(ServiceError);
    expect((outcome.error as ServiceError).code).toBe('plan_required');
    expect((outcome.error as ServiceError).detail).toContain('with resolution monthly');
  });

  it('answers from the version asked for, and releases the snapshot after the work', async () => {
    // That version's snapshot (the sample's current one), watched as the call holds and lets go of it.
    const snapshot = (await snapshots.acquireVersion(version)) as Snapshot;
    snapshot.release();
    const acquire = vi.spyOn(snapshot, 'acquire');
    const release = vi.spyOn(snapshot, 'release');
    let seen: Snapshot | undefined;
    let releasedDuringWork: number | undefined;
    const outcome = await call('getElement', null).run(
      () => ({ input: 'Fe', version }),
      async (_input, s) => {
        seen = s;
        releasedDuringWork = release.mock.calls.length;
        return { ok: true };
      },
    );
    expect(outcome).toEqual({ answer: { ok: true }, receipt: null });
    expect(seen?.version).toBe(version);
    expect(seen).toBe(snapshot);
    expect(acquire).toHaveBeenCalledTimes(1);
    expect(releasedDuringWork).toBe(0);
    expect(release).toHaveBeenCalledTimes(1);
    acquire.mockRestore();
    release.mockRestore();
  });

  it('a version not kept is data_version_gone, naming the current one', async () => {
    const outcome = await call('getElement', null).run(
      () => ({ input: null, version: 'ffffffffffffffff' }),
      async () => 'never',
    );
    const error = outcome.error as ServiceError;
    expect(error.code).toBe('data_version_gone');
    expect(error.extra).toMatchObject({ current_version: version });
  });

  it('a damaged snapshot page is data_unavailable and the file is checked at once', async () => {
    const suspect = vi.spyOn(snapshots, 'suspect').mockResolvedValue(false);
    const outcome = await call('getElement', null).run(
      () => ({ input: null, version: null }),
      async () => {
        throw Object.assign(new Error('database disk image is malformed'), { code: 'SQLITE_CORRUPT' });
      },
    );
    expect((outcome.error as ServiceError).code).toBe('data_unavailable');
    expect(suspect).toHaveBeenCalledTimes(1);
    suspect.mockRestore();
  });

  // The ledger failing while a payment is settled may come after its money moved (a retry's
  // settlement read back): that answer must not say that nothing was charged.
  it('a state failure while settling says how to get the answer, not that nothing was charged', async () => {
    const payments = {
      priorPayment: async () => null,
      verify: async () => ({ requirements: { amount: '10000' } }),
      settle: async () => {
        throw new StateUnavailableError('findPayment', 'Connection terminated', 'unreachable');
      },
      release: async () => {},
    } as unknown as PaymentService;
    const paid = new OperationCall(
      { ...deps(), payments },
      operation('getElementHistory'),
      null,
      request({
        payment: 'signed',
        retry: 'Repeat this same request with the same PAYMENT-SIGNATURE header',
      }),
    );
    expect(paid.payer).toBe(true);
    const outcome = await paid.run(
      () => ({ input: null, version: null }),
      async () => {
        await paid.charge();
        return { ok: true };
      },
    );
    const error = outcome.error as ServiceError;
    expect([error.code, error.status, error.headers['retry-after']]).toEqual(['state_unavailable', 503, '2']);
    expect(error.detail).toMatch(
      /cannot be reached while the payment was being settled; it may have been taken/,
    );
    expect(error.detail).toMatch(
      /Repeat this same request with the same PAYMENT-SIGNATURE header to get the answer/,
    );
    expect(error.detail).not.toMatch(/nothing was charged/i);
  });

  it('any other fault is logged and is internal_error, with no detail of it', async () => {
    log.mockClear();
    const outcome = await call('getElement', null).run(
      () => ({ input: null, version: null }),
      async () => {
        throw new Error('secret path /x/y');
      },
    );
    const error = outcome.error as ServiceError;
    expect(error.code).toBe('internal_error');
    expect(error.detail).not.toContain('secret');
    expect(log).toHaveBeenCalledWith('request failed', expect.objectContaining({ err: 'secret path /x/y' }));
  });
});
