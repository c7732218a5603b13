type Schema = Record<string, unknown>;

/**
 * A tool schema as every host can read it (the MCP Inspector's --strict portability rules): a
 * property of several JSON types as anyOf of single types (a host that maps tool schemas onto a
 * one-type dialect, such as Gemini's function declarations, rejects `"type": [...]`), and a map of
 * any values as `additionalProperties: true` (zod writes it `{}`, a schema that constrains
 * nothing), without `propertyNames: {type: string}` (a JSON object's names are strings anyway).
 * Returns a copy; what it accepts is unchanged.
 */
export function portableSchema<T extends object>(schema: T): T {
  return portable(schema) as T;
}

function portable(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(portable);
  if (!node || typeof node !== 'object') return node;
  const out: Schema = {};
  for (const [key, value] of Object.entries(node as Schema)) out[key] = portable(value);
  if (Array.isArray(out.type) && out.type.length > 1) {
    const { type, ...rest } = out;
    return { ...rest, anyOf: (type as string[]).map((t) => ({ type: t })) };
  }
  if (isEmptySchema(out.additionalProperties)) {
    out.additionalProperties = true;
    if (isEmptySchema(out.propertyNames) || isStringSchema(out.propertyNames)) delete out.propertyNames;
  }
  return out;
}

const isEmptySchema = (s: unknown) =>
  typeof s === 'object' && s !== null && !Array.isArray(s) && Object.keys(s).length === 0;
const isStringSchema = (s: unknown) =>
  typeof s === 'object' && s !== null && Object.keys(s).length === 1 && (s as Schema).type === 'string';
