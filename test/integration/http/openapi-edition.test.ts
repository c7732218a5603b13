import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATIONS } from '../../../src/access/policy.js';
import { sampleApp } from '../../helpers/app.js';

/** The OpenAPI document of each edition names that edition's plans only. */
type Doc = {
  tags: { name: string; description: string }[];
  paths: Record<string, Record<string, { operationId: string; 'x-access': string }>>;
};

let full: Awaited<ReturnType<typeof sampleApp>>;
let enterprise: Awaited<ReturnType<typeof sampleApp>>;
beforeAll(async () => {
  full = await sampleApp();
  enterprise = await sampleApp({ EDITION: 'enterprise' });
});
afterAll(async () => {
  await full?.close();
  await enterprise?.close();
});

const documentOf = async (ctx: typeof full) => {
  const res = await ctx.app.request('/v1/openapi.json');
  expect(res.status).toBe(200);
  const text = await res.text();
  return { doc: JSON.parse(text) as Doc, text };
};

/** Every description and summary of a document, examples aside (they are data). */
function descriptions(node: unknown, out: string[] = []): string[] {
  if (Array.isArray(node)) for (const item of node) descriptions(item, out);
  else if (node && typeof node === 'object')
    for (const [key, value] of Object.entries(node)) {
      if (typeof value === 'string' && (key === 'description' || key === 'summary')) out.push(value);
      else if (key !== 'example' && key !== 'examples') descriptions(value, out);
    }
  return out;
}

describe('the OpenAPI document of the enterprise edition', () => {
  it('names Enterprise where the full edition names Personal or Professional, and the same elsewhere', async () => {
    const [f, e] = [await documentOf(full), await documentOf(enterprise)];
    const plans = /\b(Personal|Professional)\b/;
    // The full edition's own texts do name them (the check below is not vacuous).
    expect(descriptions(f.doc).filter((d) => plans.test(d)).length).toBeGreaterThan(3);
    expect(descriptions(e.doc).filter((d) => plans.test(d))).toEqual([]);
    const history = e.doc.paths['/elements/{symbol}/history']!.get! as unknown as {
      parameters: { name: string; description: string }[];
    };
    expect(history.parameters.find((p) => p.name === 'resolution')!.description).toBe(
      'yearly (any key), monthly (Enterprise), daily (Enterprise, elements only)',
    );
    expect(e.text).toContain('"High-impact research intensity; null below the Enterprise plan"');
    // x-access: the plan that opens each operation in this edition.
    for (const [path, item] of Object.entries(e.doc.paths))
      for (const [method, o] of Object.entries(item)) {
        const op = OPERATIONS.find((x) => x.id === o.operationId)!;
        const want = op.access === 'public' || op.access === 'key' ? op.access : 'enterprise';
        expect([method, path, o['x-access']]).toEqual([method, path, want]);
      }
    expect(Object.values(f.doc.paths).some((item) => item.get?.['x-access'] === 'personal')).toBe(true);
  });

  it('has no research or lab: neither their paths nor their tags', async () => {
    const { doc } = await documentOf(enterprise);
    expect(Object.keys(doc.paths).filter((p) => /^\/(research|lab)\b/.test(p))).toEqual([]);
    expect(doc.tags.map((t) => t.name)).toEqual([
      'elements',
      'subjects',
      'versions',
      'exports',
      'changes',
      'feeds',
      'badges',
    ]);
    expect((await documentOf(full)).doc.tags.map((t) => t.name)).toContain('lab');
  });
});
