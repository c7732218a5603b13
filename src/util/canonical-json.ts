/**
 * A JSON value as one text whatever the order of its objects' keys (undefined members left out, as
 * JSON has none): the same value gives the same text. What a payment bought is compared by it (MCP's
 * tool arguments, a POST's body, the signed payment itself), and a lab quote is signed over it.
 */
export function canonicalJson(value: unknown): string {
  return (
    JSON.stringify(value, (_key, v: unknown) =>
      v && typeof v === 'object' && !Array.isArray(v)
        ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
        : v,
    ) ?? 'null'
  );
}
