/**
 * A list printed as a table on stdout (columns padded to their widest cell, the last left
 * unpadded), and `empty` on stderr when it has no rows: `ri keys list`, `ri subscriptions list`.
 */
export function printTable(header: string[], rows: string[][], empty: string): void {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  process.stdout.write([header, ...rows].map((r) => `${line(r)}\n`).join(''));
  if (rows.length === 0) process.stderr.write(`${empty}\n`);
}
