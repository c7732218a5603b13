import { describe, expect, it } from 'vitest';
import { hasEvidence, wholeQuestion } from '../../../src/core/research/communities.js';

const none = { matched: 0, whole: false, further: 0, model: 0 };

describe('hasEvidence: when a research community is named', () => {
  it('names one that papers matching the question belong to, at any rank', () => {
    expect(hasEvidence({ ...none, matched: 1 }, 9)).toBe(true);
  });

  it('names one whose own texts hold the whole question, not one that shares a word of it', () => {
    expect(hasEvidence({ ...none, whole: true }, 9)).toBe(true);
    expect(hasEvidence(none, 0)).toBe(false);
  });

  it("names one for the titles' topic model from 5% of the question", () => {
    expect(hasEvidence({ ...none, model: 0.05 }, 9)).toBe(true);
    expect(hasEvidence({ ...none, model: 0.049 }, 0)).toBe(false);
  });

  it('names one that two closest papers have as a further topic only in the first four', () => {
    expect(hasEvidence({ ...none, further: 2 }, 3)).toBe(true);
    expect(hasEvidence({ ...none, further: 2 }, 4)).toBe(false);
    expect(hasEvidence({ ...none, further: 1 }, 0)).toBe(false);
  });
});

describe('wholeQuestion', () => {
  it('asks for the words next to one another, or the one word alone', () => {
    const group = (word: string) => ({ word, alternatives: [] });
    expect(wholeQuestion([group('Oxygen'), group('evolution')])).toBe('NEAR("oxygen" "evolution", 2)');
    expect(wholeQuestion([group('cryosphere')])).toBe('"cryosphere"');
  });
});
