import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isHeldBack } from '../../../src/tagging/evaluate.js';

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

describe('ri tagger-eval', () => {
  const part = (out: string, name: string) => {
    const m = new RegExp(`^${name}\\s+(\\d+) titles .*precision=([\\d.]+)%\\s+recall=([\\d.]+)%`, 'm').exec(
      out,
    );
    expect(m, `no ${name} line in:\n${out}`).not.toBeNull();
    return { titles: Number(m![1]), precision: Number(m![2]), recall: Number(m![3]) };
  };

  it('reports precision and recall on the tuning part and the held-back part separately', () => {
    const out = execFileSync(process.execPath, [MAIN, 'tagger-eval'], { encoding: 'utf8' });
    const tuning = part(out, 'tuning');
    const held = part(out, 'held-back');
    expect(tuning.titles + held.titles).toBe(Number(/on (\d+) titles/.exec(out)![1]));
    expect(held.precision).toBeGreaterThanOrEqual(98);
    expect(held.recall).toBeGreaterThanOrEqual(95);
  });

  it('splits any labelled file by the hash of each title and lists only tuning failures', () => {
    const titles = Array.from({ length: 40 }, (_, i) => `Iron oxide sample ${i}`);
    const dir = mkdtempSync(join(tmpdir(), 'ri-tagger-eval-'));
    const file = join(dir, 'labels.jsonl');
    // every label says Cu: the tagger gives O and Fe, so every title disagrees
    writeFileSync(file, titles.map((title) => JSON.stringify({ title, elements: ['Cu'] })).join('\n'));
    const out = execFileSync(process.execPath, [MAIN, 'tagger-eval', file, '--failures'], {
      encoding: 'utf8',
    });
    const held = titles.filter(isHeldBack).length;
    expect(held).toBeGreaterThan(0);
    expect(part(out, 'held-back')).toEqual({ titles: held, precision: 0, recall: 0 });
    expect(part(out, 'tuning').titles).toBe(40 - held);
    expect(out).toContain(`${40 - held} tuning titles disagree (${held} held back)`);
    for (const t of titles) expect(out.includes(JSON.stringify(t))).toBe(!isHeldBack(t));
  });
});
