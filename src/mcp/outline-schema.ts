import type { Tool } from '@modelcontextprotocol/sdk/types.js';

type Schema = Record<string, unknown>;

/**
 * The fields every answer has, which the server's instructions name once (server.ts): listed in
 * each of 15 outlines they took 343 of the listing's tokens.
 */
const SHARED_FIELDS = new Set(['canonical_url', 'data_version', 'notes']);

/**
 * A tool's output schema as an outline: the answer's own fields, each with its JSON type, the
 * shared ones left out (an outline allows fields it does not list). What a host checks
 * structuredContent against and a model reads in tools/list; the whole answer schema (nested
 * records, descriptions) is in the OpenAPI document, /v1/openapi.json, where it costs no context.
 */
export function outlineSchema(schema: object): NonNullable<Tool['outputSchema']> {
  const s = schema as Schema;
  const properties = Object.fromEntries(
    Object.entries((s.properties ?? {}) as Record<string, Schema>)
      .filter(([name]) => !SHARED_FIELDS.has(name))
      .map(([name, p]) => [name, outline(p)]),
  );
  return { type: 'object', properties };
}

function outline(p: Schema): Schema {
  const types = typesOf(p);
  return types.length === 1 ? { type: types[0] } : types.length > 1 ? { type: types } : {};
}

/** The JSON types a property takes (several under anyOf/oneOf, as a nullable one); none: any. */
function typesOf(p: Schema): string[] {
  if (typeof p.type === 'string') return [p.type];
  if (Array.isArray(p.type)) return p.type as string[];
  if (p.const === null) return ['null'];
  const branches = (p.anyOf ?? p.oneOf) as Schema[] | undefined;
  if (!branches) return [];
  const all = branches.map(typesOf);
  // A branch of any type makes the whole property any type.
  if (all.some((t) => t.length === 0)) return [];
  return [...new Set(all.flat())];
}
