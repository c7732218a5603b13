import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../helpers/works.js';
import { PAID_CONFIG, servedSample } from '../../helpers/x402.js';

/**
 * /v1/openapi.json as the clients generated from it see it, over the real listener: a client
 * made by openapi-typescript types every operation's answer as its JSON schema (not `T | string`:
 * the CSV form is documented beside it), checked by compiling a call of each operation with tsc.
 */
let served: Awaited<ReturnType<typeof servedSample>>;
let servedDoc: Doc;
beforeAll(async () => {
  // With per-call payments: the fuller document (x-payment-info, the 402s).
  served = await servedSample(PAID_CONFIG);
  servedDoc = (await (await fetch(`${served.server.base}/v1/openapi.json`)).json()) as Doc;
}, 120_000);
afterAll(async () => served?.close());

const require = createRequire(import.meta.url);
/** A dev dependency's folder (openapi-typescript, typescript), resolved from the project. */
function packageDir(name: string): string {
  try {
    return dirname(require.resolve(`${name}/package.json`));
  } catch {
    throw new Error(`${name} is a dev dependency of this test: npm install --save-dev ${name}`);
  }
}

type Schema = { type?: string; enum?: unknown[]; example?: unknown; minimum?: number; required?: string[] };
interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required?: boolean;
  example?: unknown;
  schema: Schema;
}
interface Operation {
  operationId: string;
  responses?: Record<string, { content?: Record<string, unknown> }>;
  parameters?: Parameter[];
  requestBody?: {
    content: {
      'application/json': { schema: Schema & { properties?: Record<string, Schema> }; example?: unknown };
    };
  };
}
type Doc = { paths: Record<string, Record<string, Operation>> };

/** A value the parameter takes: its example, else its first enum value, else one of its type. */
function exampleValue(schema: Schema, example?: unknown): unknown {
  if (example !== undefined) return example;
  if (schema.example !== undefined) return schema.example;
  if (schema.enum) return schema.enum[0];
  if (schema.type === 'integer' || schema.type === 'number') return schema.minimum ?? 1;
  return 'x';
}

/** The smallest call of an operation: its required parameters and body, with values it takes. */
function callOf(path: string, method: string, op: Operation): string {
  const params: Record<string, Record<string, unknown>> = {};
  for (const p of op.parameters ?? [])
    if (p.required) params[p.in] = { ...params[p.in], [p.name]: exampleValue(p.schema, p.example) };
  const init: Record<string, unknown> = { params };
  const body = op.requestBody?.content['application/json'];
  if (body)
    init.body =
      body.example ??
      Object.fromEntries(
        (body.schema.required ?? []).map((name) => [
          name,
          exampleValue(body.schema.properties?.[name] ?? {}),
        ]),
      );
  // A feed answers Atom XML, a badge SVG: its answer is typed as the text it is.
  const json = Boolean(op.responses?.['200']?.content?.['application/json']);
  return `// ${op.operationId}
export async function ${op.operationId}(): Promise<string> {
  const answer = await call(${JSON.stringify(path)}, ${JSON.stringify(method)}, ${JSON.stringify(init)});
  return ${json ? 'answer.data_version' : 'answer'};
}
`;
}

/**
 * A call of every operation of `doc`, through a client typed as openapi-fetch types one: the
 * answer of a call is its 200's content, whatever the media type (so a CSV listed beside the
 * JSON makes it `T | string`, and reading a field of it does not compile).
 */
function client(doc: Doc): { source: string; operations: number } {
  let source = `import type { paths } from './schema';

type Method = 'get' | 'post';
type Op<P extends keyof paths, M extends Method> = NonNullable<paths[P][M]>;
type Answer<O> = O extends { responses: { 200: { content: infer C } } } ? C[keyof C] : never;
type Init<O> = (O extends { parameters: infer P } ? { params: P } : never) &
  (O extends { requestBody: { content: { 'application/json': infer B } } } ? { body: B } : unknown);
declare function call<P extends keyof paths, M extends Method>(
  path: P,
  method: M,
  init: Init<Op<P, M>>,
): Promise<Answer<Op<P, M>>>;

`;
  let operations = 0;
  for (const [path, item] of Object.entries(doc.paths))
    for (const [method, op] of Object.entries(item)) {
      source += callOf(path, method, op);
      operations++;
    }
  return { source, operations };
}

const run = promisify(execFile);

/** A node script's exit status and output (run apart, so that the server in this process keeps answering). */
async function node(args: string[], cwd: string): Promise<{ status: number; output: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, args, { cwd, encoding: 'utf8', timeout: 180_000 });
    return { status: 0, output: `${stdout}${stderr}` };
  } catch (e) {
    const failed = e as { code?: number; stdout?: string; stderr?: string };
    return { status: failed.code ?? -1, output: `${failed.stdout ?? ''}${failed.stderr ?? ''}` };
  }
}

/** openapi-typescript's types of `doc`, and tsc over a call of each operation: tsc's exit status and output. */
async function compile(doc: Doc): Promise<{ status: number; output: string; operations: number }> {
  const dir = tempDir('ri-openapi-client-');
  writeFileSync(join(dir, 'openapi.json'), JSON.stringify(doc));
  const generator = join(packageDir('openapi-typescript'), 'bin/cli.js');
  const generated = await node([generator, 'openapi.json', '-o', 'schema.d.ts'], dir);
  expect(generated.status, generated.output).toBe(0);
  const { source, operations } = client(doc);
  writeFileSync(join(dir, 'calls.ts'), source);
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        noEmit: true,
        target: 'es2022',
        module: 'esnext',
        moduleResolution: 'bundler',
        lib: ['es2022'],
        types: [],
      },
      files: ['calls.ts'],
    }),
  );
  return { ...(await node([join(packageDir('typescript'), 'bin/tsc'), '-p', dir], dir)), operations };
}

describe('a client generated from /v1/openapi.json (openapi-typescript)', () => {
  it('compiles a call of every operation, each answer typed as its JSON schema', async () => {
    const { status, output, operations } = await compile(servedDoc);
    expect(output).toBe('');
    expect(status).toBe(0);
    // Every operation of the full edition: the elements, subjects, versions, the exports (the
    // list and a file), changes, the four feeds, the four badges, research and the lab.
    expect(operations).toBe(29);
  }, 240_000);

  it('does not compile when an answer may also be CSV (the check can fail)', async () => {
    const doc = structuredClone(servedDoc);
    const ok = (doc.paths['/elements']!.get as unknown as { responses: Record<string, { content: object }> })
      .responses['200']!;
    ok.content = { ...ok.content, 'text/csv': { schema: { type: 'string' } } };
    const { status, output } = await compile(doc);
    expect(status).not.toBe(0);
    // At that operation's call alone: its answer is `T | string`, with no field to read.
    expect(output.match(/error TS/g)).toHaveLength(1);
    expect(output).toMatch(/Property 'data_version' does not exist on type 'string'/);
    const line = Number(/calls\.ts\((\d+),/.exec(output)![1]);
    expect(client(doc).source.split('\n')[line - 2]).toContain('call("/elements", "get"');
  }, 240_000);
});
