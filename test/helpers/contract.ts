import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';

// The contract of the API is its OpenAPI document: every 200 a test receives is checked against
// the response schema of the operation it came from (the property test and every app made by
// sampleApp), so a route answer and its declared schema cannot drift apart unnoticed.

export type Schema = Record<string, unknown>;
type Validate = (v: unknown) => { valid: boolean; errorMessage?: string };

export interface OpenApiDoc {
  paths: Record<
    string,
    Record<string, { responses: Record<string, { content?: Record<string, { schema?: Schema }> }> }>
  >;
  components: { schemas: Record<string, Schema> };
}

/** Validators of each operation's 200 JSON body, by "METHOD /template" (templates as in the document). */
export function responseValidators(doc: OpenApiDoc): Map<string, Validate> {
  const ajv = new AjvJsonSchemaValidator();
  const out = new Map<string, Validate>();
  for (const [template, item] of Object.entries(doc.paths))
    for (const [method, op] of Object.entries(item)) {
      const schema = op.responses['200']?.content?.['application/json']?.schema;
      out.set(
        `${method.toUpperCase()} ${template}`,
        ajv.getValidator(jsonSchema(schema ?? {}, doc.components.schemas) as never),
      );
    }
  return out;
}

/** The "METHOD /template" of a request path under /v1 (path without the /v1 prefix and query). */
function operationOf(method: string, path: string, doc: OpenApiDoc): string | null {
  for (const template of Object.keys(doc.paths)) {
    const pattern = new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`);
    if (pattern.test(path) && doc.paths[template]![method.toLowerCase()])
      return `${method.toUpperCase()} ${template}`;
  }
  return null;
}

/**
 * OpenAPI 3.0 schema to JSON Schema for Ajv: $refs inlined (bounded depth), `nullable` as a null
 * type, `example` dropped.
 */
function jsonSchema(s: unknown, components: Record<string, Schema>, depth = 0): unknown {
  if (Array.isArray(s)) return s.map((x) => jsonSchema(x, components, depth));
  if (s === null || typeof s !== 'object') return s;
  const o = s as Schema;
  if (typeof o.$ref === 'string') {
    if (depth > 20) return {};
    const name = o.$ref.replace('#/components/schemas/', '');
    return jsonSchema(components[name], components, depth + 1);
  }
  const out: Schema = {};
  for (const [k, v] of Object.entries(o)) {
    if (k === 'nullable' || k === 'example') continue;
    out[k] =
      k === 'properties' || k === 'definitions'
        ? Object.fromEntries(
            Object.entries(v as Schema).map(([name, p]) => [name, jsonSchema(p, components, depth)]),
          )
        : jsonSchema(v, components, depth);
  }
  if (o.nullable === true) {
    if (typeof out.type === 'string') {
      out.type = [out.type, 'null'];
      if (Array.isArray(out.enum)) out.enum = [...out.enum, null];
    } else if (out.type === undefined && Object.keys(out).length > 0)
      return { anyOf: [out, { type: 'null' }] };
  }
  return out;
}

/**
 * Wraps an app's request() so every 200 JSON answer under /v1 is validated against its
 * operation's response schema; a mismatch throws, naming the request and Ajv's message.
 */
export function checkedRequests<A extends { request: (...args: never[]) => Response | Promise<Response> }>(
  app: A,
): A {
  type Request = (
    input: string | URL | globalThis.Request,
    init?: RequestInit,
    ...rest: unknown[]
  ) => Promise<Response>;
  const original = (app.request as unknown as Request).bind(app);
  let doc: OpenApiDoc | null = null;
  let validators: Map<string, Validate> | null = null;
  const checked: Request = async (input, init, ...rest) => {
    const res = await original(input, init, ...rest);
    const href = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const method = init?.method ?? (typeof input === 'object' && 'method' in input ? input.method : 'GET');
    const url = new URL(href, 'http://app.test');
    // HEAD has no body (GET is checked); an encoded body is the identity one compressed.
    if (
      method === 'HEAD' ||
      res.headers.has('content-encoding') ||
      res.status !== 200 ||
      !url.pathname.startsWith('/v1/') ||
      url.pathname === '/v1/openapi.json' ||
      !(res.headers.get('content-type') ?? '').startsWith('application/json')
    )
      return res;
    if (!doc) {
      doc = (await (await original('/v1/openapi.json')).json()) as OpenApiDoc;
      validators = responseValidators(doc);
    }
    const op = operationOf(method, url.pathname.slice(3), doc);
    if (!op)
      throw new Error(`contract: ${method} ${url.pathname} answered 200 but is not in the OpenAPI document`);
    const verdict = validators!.get(op)!(await res.clone().json());
    if (!verdict.valid)
      throw new Error(
        `contract: ${method} ${href} does not match the ${op} response schema: ${verdict.errorMessage}`,
      );
    return res;
  };
  (app as unknown as { request: Request }).request = checked;
  return app;
}
