/**
 * A value as one JSON text whatever the order of its objects' keys: the same request gives the
 * same text (what a payment bought is compared by it: MCP's tool arguments, a POST's body).
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}
