import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { PaymentRequired } from '@x402/core/types';

type Json = Record<string, unknown>;

function firstText(r: CallToolResult): Json | null {
  const block = (r.content as { type: string; text?: string }[] | undefined)?.[0];
  if (block?.type !== 'text' || typeof block.text !== 'string') return null;
  try {
    return JSON.parse(block.text) as Json;
  } catch {
    return null;
  }
}

/** A tool error's problem (code, detail, ...), as its first text block carries it; null when not one. */
export function toolError(r: CallToolResult): Json | null {
  if (!r.isError) return null;
  const body = firstText(r);
  return body && !('x402/error' in body) ? body : null;
}

/** The x402 PaymentRequired of a tool result, read as the x402 MCP transport says: content[0].text's x402/error.data. */
export function toolTerms(r: CallToolResult): PaymentRequired {
  const wrapped = firstText(r)?.['x402/error'] as { code: number; data: PaymentRequired } | undefined;
  if (!r.isError || wrapped?.code !== 402)
    throw new Error(`not a payment-required result: ${JSON.stringify(r)}`);
  return wrapped.data;
}
