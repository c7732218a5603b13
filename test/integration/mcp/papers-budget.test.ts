import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { decode } from '@toon-format/toon';
import { parse } from 'csv-parse/sync';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PaperSchema } from '../../../src/contracts/common.js';
import { toolError } from '../../helpers/mcp.js';
import { servedSample } from '../../helpers/x402.js';

/**
 * Paper lists and lab runs an agent can hold, through the official SDK client over real HTTP on
 * the bundled sample, as history-budget.test.ts holds histories: what the model reads (the text
 * block) counted in o200k tokens; a list over its size keeps its first papers, and its note says
 * how many are left out and gives the URL of the whole answer, which REST answers whole.
 */
// biome-ignore lint/suspicious/noExplicitAny: answers are read loosely; each test asserts the shape it needs
type Json = Record<string, any>;

/** The most tokens a tool result's text may cost. */
const RESULT_BUDGET = 10_000;
/** Every field of a paper in a list (the spec's and the contract's): structuredContent keeps them all. */
const PAPER_FIELDS = Object.keys(PaperSchema.shape).sort();

let served: Awaited<ReturnType<typeof servedSample>>;
let client: Client;
const auth = () => ({ headers: { authorization: `Bearer ${served.ctx.keys.professional}` } });

beforeAll(async () => {
  served = await servedSample();
  client = new Client({ name: 'ri-papers-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${served.server.base}/mcp`), { requestInit: auth() }),
  );
  // As every host does: the tools first (the SDK then checks each result against its output schema).
  await client.listTools();
}, 120_000);
afterAll(async () => {
  await client?.close();
  await served?.close();
});

async function call(name: string, args: Json) {
  const r = (await client.callTool({ name, arguments: args })) as CallToolResult;
  expect([name, args, toolError(r)]).toEqual([name, args, null]);
  const text = (r.content as { text: string }[])[0]!.text;
  return { answer: r.structuredContent as Json, text, tokens: countTokens(text) };
}

async function rest(path: string): Promise<Json> {
  const res = await fetch(path.startsWith('http') ? path : `${served.server.base}${path}`, auth());
  expect([path, res.status]).toEqual([path, 200]);
  return (await res.json()) as Json;
}

const wholeUrl = (note: string) => /The whole answer: (\S+) \(/.exec(note)![1]!;

/**
 * A paper result held to its size: within the budget, its papers the first of the whole list with
 * every field, and, when some are left out, a note (in the text the model reads too) that says
 * which and names the URL of the whole answer. The number of papers kept.
 */
function expectHeld(got: Awaited<ReturnType<typeof call>>, whole: Json[], label: unknown): number {
  expect([label, got.tokens <= RESULT_BUDGET]).toEqual([label, true]);
  const papers = got.answer.papers as Json[];
  const kept = papers.length;
  expect([label, papers]).toEqual([label, whole.slice(0, kept)]);
  for (const p of papers) expect(Object.keys(p).sort()).toEqual(PAPER_FIELDS);
  const note = got.answer.notes.left_out as string | undefined;
  expect((decode(got.text) as Json).notes.left_out).toBe(note);
  if (kept === whole.length) expect([label, note]).toEqual([label, undefined]);
  else
    expect([label, note]).toEqual([
      label,
      expect.stringContaining(
        `Papers ${kept + 1} to ${whole.length} of the list (${whole.length - kept} of ${whole.length}) are left out: a result holds about 9,000 tokens and keeps the first papers that fit.`,
      ),
    ]);
  return kept;
}

describe('paper tool results held to a size', () => {
  it("an element's 100 papers: its first papers within the budget, what is left out, and the whole list by the note's URL, as JSON and CSV", async () => {
    let cut = 0;
    for (const symbol of ['O', 'Fe', 'C', 'Ni']) {
      const whole = (await rest(`/v1/elements/${symbol}/papers?limit=100`)).papers as Json[];
      const got = await call('get_element_papers', { symbol, limit: 100 });
      const kept = expectHeld(got, whole, symbol);
      if (kept === whole.length) continue;
      cut++;
      // Most of what the size allows is used (about 60 papers of the sample's).
      expect([symbol, kept >= 40]).toEqual([symbol, true]);
      const note = got.answer.notes.left_out as string;
      const url = wholeUrl(note);
      expect(url).toBe(
        `${served.server.base}/v1/elements/${symbol}/papers?sort=impact&limit=100&data_version=${got.answer.data_version}`,
      );
      // The URL of the whole answer answers it, as JSON and as CSV.
      expect((await rest(url)).papers).toEqual(whole);
      const csv = await fetch(`${url}&format=csv`, auth());
      expect([csv.status, csv.headers.get('content-type')]).toEqual([200, 'text/csv; charset=utf-8']);
      expect((parse(await csv.text(), { columns: true }) as Json[]).map((r) => r.openalex_id)).toEqual(
        whole.map((p) => p.openalex_id),
      );
    }
    // On the sample, limit 100 is over the size for oxygen at least.
    expect(cut).toBeGreaterThan(0);
  });

  it("a list in another order keeps its own first papers; a list that fits comes whole, as REST's", async () => {
    const whole = (await rest('/v1/elements/O/papers?limit=100&sort=newest')).papers as Json[];
    const newest = await call('get_element_papers', { symbol: 'O', limit: 100, sort: 'newest' });
    expect(expectHeld(newest, whole, 'newest')).toBeLessThan(100);
    const twenty = await call('get_element_papers', { symbol: 'Fe', limit: 20 });
    const rest20 = await rest('/v1/elements/Fe/papers?limit=20');
    expect(twenty.answer.notes.left_out).toBeUndefined();
    expect(twenty.answer.papers).toEqual(rest20.papers);
  });

  it("every subject's 100 papers of a few searches within the budget, the rest by the note's URL", async () => {
    const subjects = new Map<string, Json>();
    for (const q of ['oxygen evolution', 'battery', 'catalysis', 'perovskite solar cells', 'iron']) {
      for (const r of (await call('search_subjects', { q })).answer.results as Json[])
        subjects.set(`${r.subject_type}/${r.subject_id}`, r);
    }
    expect(subjects.size).toBeGreaterThan(10);
    let cut = 0;
    for (const [path, s] of subjects) {
      const whole = (await rest(`/v1/subjects/${path}/papers?limit=100`)).papers as Json[];
      const got = await call('get_subject_papers', {
        subject_type: s.subject_type,
        subject_id: s.subject_id,
        limit: 100,
      });
      if (expectHeld(got, whole, path) === whole.length) continue;
      cut++;
      const url = wholeUrl(got.answer.notes.left_out);
      expect(url.startsWith(`${served.server.base}/v1/subjects/${path}/papers?`)).toBe(true);
      expect((await rest(url)).papers).toEqual(whole);
    }
    expect(cut).toBeGreaterThan(0);
  });

  it("a lab run of papers_100 within the budget: its first papers, and the whole run by REST's lab run of the same quote", async () => {
    let cut = 0;
    for (const q of ['Fe', 'Ni Fe', '(Ni OR Co) Fe year:2020..']) {
      const quote = (await call('lab_quote', { q })).answer;
      if (!quote.deliverables.papers_100) continue;
      const got = await call('lab_run', { quote_id: quote.quote_id, depth: 'papers_100' });
      const url = `${served.server.base}/v1/lab/run?quote_id=${quote.quote_id}&depth=papers_100`;
      const whole = (await rest(url)).papers as Json[];
      expect(whole).toHaveLength(quote.deliverables.papers_100.papers);
      if (expectHeld(got, whole, q) === whole.length) continue;
      cut++;
      expect(wholeUrl(got.answer.notes.left_out)).toBe(url);
      expect(got.answer.notes.left_out).toContain('without a key it is paid again');
    }
    expect(cut).toBeGreaterThan(0);
  });
});
