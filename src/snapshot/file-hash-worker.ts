/** Worker thread of file-hash.ts: hashes the file it is started with and answers once. */
import { answerOnce } from '../util/one-shot-worker.js';
import { contentHash } from './file-hash.js';

await answerOnce((data: { path: string }) => contentHash(data.path));
