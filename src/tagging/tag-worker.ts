/** Worker thread of tag-titles.ts: tags the titles it is started with and answers once. */
import { answerOnce } from '../util/one-shot-worker.js';
import { tagTitles } from './tag-titles.js';

await answerOnce((data: { titles: (string | null)[] }) => tagTitles(data.titles));
