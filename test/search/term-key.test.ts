import { describe, expect, it } from 'vitest';
import { TERM_KEY_BYTES, isLongTerm, prefixKeyRange, termKey } from '../../src/search/term-key.js';

const inRange = (key: Buffer, range: { from: Buffer; to: Buffer | null }) =>
  Buffer.compare(key, range.from) >= 0 && (range.to === null || Buffer.compare(key, range.to) < 0);

describe('term keys', () => {
  it('keys a short term by its bytes and a long one by a bounded prefix and its hash', () => {
    expect(termKey('straße')).toEqual(Buffer.from('straße', 'utf8'));
    const long = 'a'.repeat(TERM_KEY_BYTES + 1);
    const other = `${'a'.repeat(TERM_KEY_BYTES)}b`;
    expect(isLongTerm(long)).toBe(true);
    expect(isLongTerm('a'.repeat(TERM_KEY_BYTES))).toBe(false);
    expect(termKey(long).length).toBe(TERM_KEY_BYTES + 32);
    expect(termKey('x'.repeat(200_000)).length).toBe(TERM_KEY_BYTES + 32);
    expect(termKey(long).equals(termKey(other))).toBe(false);
    expect(termKey(long).equals(termKey(long))).toBe(true);
    // A multi-byte character cut by the key's prefix still gives distinct keys.
    expect(termKey('é'.repeat(600)).equals(termKey(`${'é'.repeat(599)}è`))).toBe(false);
  });

  it('puts the key of every term starting with a prefix in its key range, and no key of a shorter term', () => {
    const terms = [
      'dep',
      'deploy',
      'deployment',
      'deq',
      'de',
      'dep\u{10ffff}',
      'привет',
      'при',
      'прж',
      `dep${'x'.repeat(3_000)}`,
      `${'d'.repeat(TERM_KEY_BYTES)}ep`,
      `${'d'.repeat(TERM_KEY_BYTES)}eq`,
      '\u{10ffff}\u{10ffff}',
    ];
    const prefixes = ['dep', 'de', 'при', 'd'.repeat(TERM_KEY_BYTES + 1), '\u{10ffff}', 'dep\u{10ffff}'];
    for (const prefix of prefixes) {
      const range = prefixKeyRange(prefix);
      for (const term of terms) {
        if (term.startsWith(prefix))
          expect(inRange(termKey(term), range), `${prefix.slice(0, 9)} ${term.slice(0, 9)}`).toBe(true);
        // Outside the range only terms not starting with the prefix (inside: checked by the caller).
        else if (!isLongTerm(prefix))
          expect(inRange(termKey(term), range), `${prefix.slice(0, 9)} ${term.slice(0, 9)}`).toBe(false);
      }
    }
  });
});
