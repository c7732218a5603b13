import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { strFromU8, unzipSync } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LAB_DEPTHS, LAB_QUOTE_USD, OPERATIONS } from '../../../src/access/policy.js';
import { frontMatter, SKILL_DIR, skillContentHash, skillSources } from '../../../src/skill/skill.js';
import { bearer, type sampleApp } from '../../helpers/app.js';
import { servedSample } from '../../helpers/x402.js';

type Ctx = Awaited<ReturnType<typeof sampleApp>>;
let ctx: Ctx;
let server: { base: string; close(): Promise<void> };

let served: Awaited<ReturnType<typeof servedSample>>;

beforeAll(async () => {
  served = await servedSample();
  ({ ctx, server } = served);
}, 120_000);

afterAll(async () => {
  await served?.close();
});

async function unzipped(base = server.base): Promise<Record<string, string>> {
  const res = await fetch(`${base}/v1/skill`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('application/zip');
  const files = unzipSync(new Uint8Array(await res.arrayBuffer()));
  return Object.fromEntries(Object.entries(files).map(([p, b]) => [p, strFromU8(b)]));
}

describe('the agent skill', () => {
  it('is a zip in the Agent Skills layout whose front matter names it, says when to use it, and its version', async () => {
    const files = await unzipped();
    expect(Object.keys(files).sort()).toEqual([
      'research-intensity/SKILL.md',
      'research-intensity/reference/mcp.md',
      'research-intensity/reference/metrics.md',
      'research-intensity/reference/pricing.md',
      'research-intensity/reference/rest.md',
    ]);
    const fm = frontMatter(files['research-intensity/SKILL.md']!);
    expect(fm.name).toBe('research-intensity');
    expect(fm.description!.length).toBeGreaterThan(100);
    expect(fm.version).toMatch(/^\d+\.\d+\.\d+$/);
    // Saved under its version's name, the first time and from the response cache alike.
    for (let i = 0; i < 2; i++) {
      const res = await fetch(`${server.base}/v1/skill`, { headers: { 'accept-encoding': 'gzip, br' } });
      expect(res.headers.get('content-disposition')).toBe(
        `attachment; filename="research-intensity-skill-${fm.version}.zip"`,
      );
    }
    expect(await (await fetch(`${server.base}/skill.md`)).text()).toBe(files['research-intensity/SKILL.md']);
    // No placeholder is left: every address is this server's.
    for (const text of Object.values(files)) expect(text).not.toContain('{{');
  });

  it('tells the agent to check its version, and /v1/skill/version gives the version it carries', async () => {
    const files = await unzipped();
    const md = files['research-intensity/SKILL.md']!;
    expect(md).toContain(`${server.base}/v1/skill/version`);
    const v = (await (await fetch(`${server.base}/v1/skill/version`)).json()) as {
      version: string;
      zip_url: string;
    };
    expect(v.version).toBe(frontMatter(md).version);
    // The version the body compares with is the file's own (an older one there makes every agent
    // report the skill as outdated).
    expect(md).toContain(`this file's (${frontMatter(md).version})`);
    expect(v.zip_url).toBe(`${server.base}/v1/skill`);
    // An agent holding an older copy learns of the newer one by comparing the two.
    expect(md).toMatch(/newer than this file's \(\d+\.\d+\.\d+\)/);
  });

  it('its version changes when its content does (skill/manifest.json keeps one hash per version)', () => {
    const sources = skillSources();
    const version = frontMatter(sources.get('SKILL.md')!).version!;
    const manifest = JSON.parse(readFileSync(join(SKILL_DIR, 'manifest.json'), 'utf8')) as {
      versions: Record<string, string>;
    };
    const recorded = manifest.versions[version];
    expect(
      recorded,
      `skill/ changed: raise version in skill/SKILL.md (now ${version}) and run node scripts/skill-manifest.mjs`,
    ).toBe(skillContentHash(sources));
    // Two versions never share content.
    expect(new Set(Object.values(manifest.versions)).size).toBe(Object.keys(manifest.versions).length);
  });

  it('every link and example in it answers on a running server', async () => {
    await everyLinkAnswers(await unzipped(), server.base, ctx.keys.professional, true);
  });

  it('calls free, in reference/rest.md, only what answers without a key', async () => {
    const rest = (await unzipped())['research-intensity/reference/rest.md']!;
    const free: string[] = [];
    for (const section of rest.split(/^(?=## )/m)) {
      const heading = section.split('\n')[0]!;
      // What a heading says covers its section; what follows an address (to the next one or the
      // next item), that address.
      for (const m of section.matchAll(/`GET ([^`]+)`([\s\S]*?)(?=`GET |\n- |\n\n|$)/g))
        if (/\bfree\b/.test(heading) || /\(free\b/.test(m[2]!)) free.push(m[1]!);
    }
    expect(free.length).toBeGreaterThanOrEqual(3);
    for (const url of free) {
      const res = await fetch(url);
      await res.arrayBuffer();
      expect([url, res.status]).toEqual([url, 200]);
    }
  });

  it('never forbids repeating a refused request the skill tells the agent to repeat', async () => {
    const files = await unzipped();
    const never = files['research-intensity/SKILL.md']!.split('## Never')[1]!;
    // 429: after Retry-After; 402: with a payment (reference/pricing.md says to repeat it so).
    expect(files['research-intensity/reference/pricing.md']).toMatch(
      /repeat the same request with `PAYMENT-SIGNATURE`/,
    );
    expect(never).toMatch(/429[\s\S]*`Retry-After`/);
    expect(never).toMatch(/402[\s\S]*`PAYMENT-SIGNATURE`/);
    expect(never).not.toMatch(/Never retry a 4xx with the same request/);
  });

  it('states the prices of the price table', () => {
    const pricing = skillSources().get('reference/pricing.md')!;
    for (const op of OPERATIONS)
      for (const tier of op.prices)
        expect([op.id, pricing.includes(tier.usd.toFixed(2))]).toEqual([op.id, true]);
    expect(pricing).toContain(`minus ${LAB_QUOTE_USD.toFixed(2)}`);
    expect(Object.keys(LAB_DEPTHS).length).toBe(2);
  });
});

/**
 * Every address in the skill's files answers 200 on the server at `base` with `key`, copied as
 * written: each URL, and each template in backticks (`GET <url>`, a path), with its placeholders
 * filled with real values (`{subject_id}` a topic found by the search, `{quote_id}` a quote's). A
 * template that cannot be copied (`.../papers`, `quote_id=...`, an unknown placeholder) fails,
 * and so does an empty parameter (`?sort=&limit=`, a 400). Every MCP tool the server lists is in
 * SKILL.md's table of what to call. `lab`: quote once for the run's example.
 */
async function everyLinkAnswers(files: Record<string, string>, base: string, key: string, lab: boolean) {
  const topic = (
    (await (await fetch(`${base}/v1/subjects/search?q=oxygen%20evolution`, bearer(key))).json()) as {
      results: { subject_type: string; subject_id: string }[];
    }
  ).results.find((r) => r.subject_type === 'topic')!.subject_id;
  const quote = lab
    ? ((await (await fetch(`${base}/v1/lab/quote?q=Ni%20Fe`, bearer(key))).json()) as { quote_id: string })
        .quote_id
    : '';
  const examples: Record<string, string> = { subject_id: topic, ...(lab ? { quote_id: quote } : {}) };
  const templates = new Set<string>();
  for (const text of Object.values(files)) {
    for (const m of text.matchAll(/https?:\/\/[^\s)`'"|<>]+/g)) templates.add(m[0].replace(/[.,:]+$/, ''));
    // In backticks: an address after GET, or a path (a query string is part of it).
    for (const m of text.matchAll(/`(?:GET )?((?:https?:\/\/|\.\.\.|\/)[^`\s]*)`/g)) templates.add(m[1]!);
  }
  expect(templates.size).toBeGreaterThan(lab ? 15 : 10);
  const checked: string[] = [];
  for (const template of templates) {
    const url = new URL(
      template.replace(/\{(\w+)\}/g, (all, name: string) => examples[name] ?? all),
      base,
    ).href;
    // Copied as written, it must be a whole address of this server with nothing left to fill.
    expect([template, url.startsWith(`${base}/`) || url === base]).toEqual([template, true]);
    expect([template, /\.\.\.|\{|%7B/.test(url)]).toEqual([template, false]);
    expect([template, /[?&][a-z_]+=(&|$)/.test(url)]).toEqual([template, false]);
    if (url.endsWith('/mcp')) {
      const client = new Client({ name: 'skill-test', version: '1' });
      await client.connect(new StreamableHTTPClientTransport(new URL(url)));
      // Every tool the server lists is in the skill's table of what to call.
      const { tools } = await client.listTools();
      const table = files['research-intensity/SKILL.md']!;
      for (const t of tools) expect([t.name, table.includes(`\`${t.name}\``)]).toEqual([t.name, true]);
      await client.close();
      checked.push(url);
      continue;
    }
    const res = await fetch(url, bearer(key));
    await res.arrayBuffer();
    expect([template, url, res.status]).toEqual([template, url, 200]);
    checked.push(url);
  }
  expect(checked.length).toBeGreaterThan(lab ? 15 : 10);
}

describe('the agent skill of the older edition (EDITION=enterprise)', () => {
  let older: Awaited<ReturnType<typeof servedSample>>;
  beforeAll(async () => {
    older = await servedSample({ EDITION: 'enterprise' });
  }, 120_000);
  afterAll(async () => {
    await older?.close();
  });

  /** What only the full edition serves: its plans, research, the lab, per-call payment. */
  const fullOnly = (text: string) =>
    text.match(
      /Personal|Professional|\blab\b|\blab_\w+|\/v1\/lab|\/v1\/research|`research`|reading list|x402|PAYMENT-|\bpa(?:y|id|yment)\b|\bpric(?:e|ed|es)\b/gi,
    );

  it('says only what that edition serves, names its plan, and has a version of its own', async () => {
    const [full, files] = [await unzipped(), await unzipped(older.server.base)];
    expect(Object.keys(files).sort()).toEqual(Object.keys(full).sort());
    // The full edition's skill does say them (the check below is not vacuous).
    expect(Object.values(full).filter((t) => fullOnly(t)).length).toBe(Object.keys(full).length);
    expect(Object.entries(files).map(([path, text]) => [path, fullOnly(text)])).toEqual(
      Object.keys(files).map((path) => [path, null]),
    );
    for (const text of Object.values(files)) expect(text).not.toContain('{{');
    expect(files['research-intensity/reference/pricing.md']).toContain(
      'HRI is null below the Enterprise plan',
    );
    expect(files['research-intensity/reference/rest.md']).toMatch(/`monthly`\s+\(Enterprise\)/);
    // Its own version: the release's, marked as this edition's; /v1/skill/version gives it.
    const md = files['research-intensity/SKILL.md']!;
    const version = frontMatter(md).version!;
    expect(version).toBe(`${frontMatter(full['research-intensity/SKILL.md']!).version}+enterprise`);
    expect(md).toContain(`this file's (${version})`);
    const served = (await (await fetch(`${older.server.base}/v1/skill/version`)).json()) as {
      version: string;
    };
    expect(served.version).toBe(version);
    expect(await (await fetch(`${older.server.base}/skill.md`)).text()).toBe(md);
  });

  it('every link and example in it answers on a server of that edition', async () => {
    await everyLinkAnswers(
      await unzipped(older.server.base),
      older.server.base,
      older.ctx.keys.enterprise,
      false,
    );
  });
});
