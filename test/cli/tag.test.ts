import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

// The built CLI (npm test builds dist first via pretest).
const MAIN = resolve(process.cwd(), 'dist/cli/main.js');

describe('ri tag', () => {
  it('has a built CLI (run `npm run build` first)', () => {
    expect(existsSync(MAIN), `${MAIN} is missing: run npm run build`).toBe(true);
  });

  it('writes one JSON array of symbols per input line, in order', () => {
    const out = execFileSync(process.execPath, [MAIN, 'tag'], {
      input: 'Iron oxide nanoparticles\nLead to better results\n',
      encoding: 'utf8',
    });
    expect(out.split('\n')).toEqual(['["O","Fe"]', '[]', '']);
  });

  it('keeps order and line count on a larger input', () => {
    const titles = Array.from({ length: 5000 }, (_, i) =>
      i % 2 === 0 ? `MoS2 sample ${i}` : `No element ${i}`,
    );
    const out = execFileSync(process.execPath, [MAIN, 'tag'], {
      input: `${titles.join('\n')}\n`,
      encoding: 'utf8',
    });
    const lines = out.trimEnd().split('\n');
    expect(lines).toHaveLength(5000);
    expect(lines[0]).toBe('["S","Mo"]');
    expect(lines[1]).toBe('[]');
    expect(lines[4998]).toBe('["S","Mo"]');
  });

  it('prints usage on --help', () => {
    const out = execFileSync(process.execPath, [MAIN, 'tag', '--help'], { encoding: 'utf8' });
    expect(out).toContain('usage: ri tag');
  });
});
