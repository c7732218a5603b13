import { parentPort, Worker, workerData } from 'node:worker_threads';

/**
 * A worker thread that does one thing with what it is started with and answers once: the tag
 * step's parts (tagging/tag-worker.ts) and large files' hashes (snapshot/file-hash-worker.ts).
 */
type Reply<T> = { ok: true; value: T } | { ok: false; error: string };

/**
 * Starts the worker `file` on `data`; its answer, or its failure as an Error naming `what`.
 * `signal` ends the worker, rejecting with the signal's reason.
 */
export function runInWorker<T>(file: string, data: unknown, what: string, signal?: AbortSignal): Promise<T> {
  if (signal?.aborted) return Promise.reject(signal.reason);
  const worker = new Worker(file, { workerData: data });
  return new Promise<T>((resolve, reject) => {
    if (signal) {
      const stop = () => {
        reject(signal.reason);
        void worker.terminate();
      };
      signal.addEventListener('abort', stop, { once: true });
      worker.once('exit', () => signal.removeEventListener('abort', stop));
    }
    worker.once('message', (reply: Reply<T>) => {
      if (reply.ok) resolve(reply.value);
      else reject(new Error(`${what} failed: ${reply.error}`));
    });
    worker.once('error', reject);
    // After an answer the promise is settled and this changes nothing.
    worker.once('exit', (code) => reject(new Error(`the ${what} worker exited (code ${code})`)));
  });
}

/** In the worker: computes the answer from the worker's data and posts it (or the error's message). */
export async function answerOnce<D, T>(compute: (data: D) => T | Promise<T>): Promise<void> {
  const port = parentPort;
  if (!port) throw new Error('this module must run as a worker thread');
  let reply: Reply<T>;
  try {
    reply = { ok: true, value: await compute(workerData as D) };
  } catch (error) {
    reply = { ok: false, error: error instanceof Error ? error.message : String(error) };
  }
  port.postMessage(reply);
}
