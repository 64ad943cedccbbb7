/**
 * FTS5's two tokenizers as Hermes configures them, in TypeScript: `unicode61` (remove_diacritics=1, token
 * characters = Unicode categories L*, N*, Co as SQLite's own tables define them) and `trigram` (case folded,
 * no diacritic removal). Character classes and foldings come from src/search/unicode61-table.ts, generated
 * by asking SQLite itself (scripts/gen-unicode61.ts). Offsets are JavaScript string (UTF-16) offsets; SQLite
 * reports UTF-8 byte offsets of the same boundaries.
 *
 * Both tokenizers are single linear passes. The scanners produce one token per `next()` call without
 * allocating token objects, for callers that stream over large texts.
 */
import { CONTINUE_RANGES, FOLD61_RUNS, FOLD_TRIGRAM_RUNS, TOKEN_RANGES } from './unicode61-table.js';
import type { QueryMode } from './query.js';

export interface Token {
  /** UTF-16 offset of the token's first character. */
  start: number;
  /** UTF-16 offset just past the token (trigram: the start of the next character). */
  end: number;
  /** The folded text the index stores. */
  text: string;
}

// --- tables ------------------------------------------------------------------------------------------------

const decode = (s: string) => (s === '' ? [] : s.split(',').map((n) => parseInt(n, 36)));

/** 0: separator, 1: token character, 2: continues a token only. BMP by table, astral by ranges. */
const CLASS_BMP = new Uint8Array(0x10000);
const ASTRAL_CLASS: number[] = []; // flattened [start, end, class] sorted by start
function loadClasses(encoded: string, cls: number) {
  const nums = decode(encoded);
  let cp = 0;
  for (let i = 0; i < nums.length; i += 2) {
    cp += nums[i]!;
    const end = cp + nums[i + 1]!;
    for (let c = cp; c < Math.min(end, 0x10000); c++) CLASS_BMP[c] = cls;
    if (end > 0x10000) ASTRAL_CLASS.push(Math.max(cp, 0x10000), end - 1, cls);
    cp = end;
  }
}
loadClasses(TOKEN_RANGES, 1);
loadClasses(CONTINUE_RANGES, 2);
{
  // Sort the astral ranges of both classes together by start (triples).
  const triples: Array<[number, number, number]> = [];
  for (let i = 0; i < ASTRAL_CLASS.length; i += 3)
    triples.push([ASTRAL_CLASS[i]!, ASTRAL_CLASS[i + 1]!, ASTRAL_CLASS[i + 2]!]);
  triples.sort((a, b) => a[0] - b[0]);
  ASTRAL_CLASS.length = 0;
  for (const t of triples) ASTRAL_CLASS.push(...t);
}
const ASCII_TOKEN = CLASS_BMP.subarray(0, 0x80);

function astralClass(cp: number): number {
  let lo = 0;
  let hi = ASTRAL_CLASS.length / 3 - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (cp < ASTRAL_CLASS[mid * 3]!) hi = mid - 1;
    else if (cp > ASTRAL_CLASS[mid * 3 + 1]!) lo = mid + 1;
    else return ASTRAL_CLASS[mid * 3 + 2]!;
  }
  return 0;
}
const charClass = (cp: number) => (cp < 0x10000 ? CLASS_BMP[cp]! : astralClass(cp));

interface Folding {
  bmp: Int32Array;
  astral: Map<number, number>;
}
function loadFolding(encoded: string): Folding {
  const bmp = new Int32Array(0x10000);
  for (let c = 0; c < 0x10000; c++) bmp[c] = c;
  const astral = new Map<number, number>();
  const nums = decode(encoded);
  let prevEnd = 0;
  for (let i = 0; i < nums.length; i += 5) {
    const start = prevEnd + nums[i]!;
    const [count, stride, mode, value] = [nums[i + 1]!, nums[i + 2]!, nums[i + 3]!, nums[i + 4]!];
    for (let k = 0; k < count; k++) {
      const cp = start + k * stride;
      const target = mode === 0 ? cp + value : value;
      if (cp < 0x10000) bmp[cp] = target;
      else astral.set(cp, target);
    }
    prevEnd = start + (count - 1) * stride + 1;
  }
  return { bmp, astral };
}
const FOLD61 = loadFolding(FOLD61_RUNS);
const FOLD_TRI = loadFolding(FOLD_TRIGRAM_RUNS);
const fold = (f: Folding, cp: number) => (cp < 0x10000 ? f.bmp[cp]! : (f.astral.get(cp) ?? cp));

/** A lone surrogate reaches SQLite as U+FFFD (its UTF-8 encoding replaces it). */
const isSurrogate = (cp: number) => cp >= 0xd800 && cp <= 0xdfff;

// --- unicode61 ---------------------------------------------------------------------------------------------

/** Streams unicode61 tokens of `text` from UTF-16 offset `from` (which must not be inside a token). */
export class Unicode61Scanner {
  start = 0;
  end = 0;
  text = '';
  private pos: number;

  constructor(
    private readonly src: string,
    from = 0,
  ) {
    this.pos = from;
  }

  /** Advance to the next token; false at the end of the text. */
  next(): boolean {
    const s = this.src;
    const n = s.length;
    let i = this.pos;
    // Skip separators: only a token character (not a continue-only diacritic) starts a token.
    for (;;) {
      if (i >= n) {
        this.pos = i;
        return false;
      }
      const c = s.charCodeAt(i);
      if (c < 0x80) {
        if (ASCII_TOKEN[c]) break;
        i++;
        continue;
      }
      // A lone surrogate is its own code point here, as codePointAt gives it.
      const cp = s.codePointAt(i)!;
      const w = cp > 0xffff ? 2 : 1;
      if (charClass(cp) === 1) break;
      i += w;
    }
    const start = i;
    // Run through the token: ASCII stretches are sliced (lower-cased if needed), other characters folded.
    let folded = '';
    let seg = i; // start of the pending ASCII stretch
    let upper = false;
    while (i < n) {
      const c = s.charCodeAt(i);
      if (c < 0x80) {
        if (!ASCII_TOKEN[c]) break;
        if (c >= 65 && c <= 90) upper = true;
        i++;
        continue;
      }
      // A lone surrogate is its own code point here, as codePointAt gives it.
      const cp = s.codePointAt(i)!;
      const w = cp > 0xffff ? 2 : 1;
      if (charClass(cp) === 0) break;
      if (seg < i) {
        const ascii = s.slice(seg, i);
        folded += upper ? ascii.toLowerCase() : ascii;
        upper = false;
      }
      const f = fold(FOLD61, cp);
      if (f !== 0) folded += f === cp ? (w === 1 ? s[i]! : s.slice(i, i + 2)) : String.fromCodePoint(f);
      i += w;
      seg = i;
    }
    if (seg < i) {
      const ascii = s.slice(seg, i);
      folded += upper ? ascii.toLowerCase() : ascii;
    }
    this.start = start;
    this.end = i;
    this.text = folded;
    this.pos = i;
    return true;
  }
}

// --- trigram -----------------------------------------------------------------------------------------------

/**
 * Streams trigram tokens: every window of three consecutive characters that do not fold to nothing, from
 * the first of them to the start of the next such character (or the end of the text). `from` must be the
 * start of a character.
 */
export class TrigramScanner {
  start = 0;
  end = 0;
  private pos: number;
  // The three characters of the current trigram: start/end offsets and folded text (null: unchanged).
  private s0 = 0;
  private e0 = 0;
  private f0: string | null = null;
  private s1 = 0;
  private e1 = 0;
  private f1: string | null = null;
  private s2 = 0;
  private e2 = 0;
  private f2: string | null = null;
  // The character after the trigram (ns = -1: none).
  private ns = -1;
  private ne = 0;
  private nf: string | null = null;
  private state = 0; // 0: not started, 1: running, 2: done

  constructor(
    private readonly src: string,
    from = 0,
  ) {
    this.pos = from;
  }

  /** Read the next character that does not fold to nothing into ns/ne/nf; ns = -1 at the end. */
  private read(): void {
    const s = this.src;
    const n = s.length;
    while (this.pos < n) {
      const i = this.pos;
      const c = s.charCodeAt(i);
      if (c < 0x80) {
        this.pos = i + 1;
        if (c === 0) continue; // NUL folds to nothing
        this.ns = i;
        this.ne = i + 1;
        this.nf = c >= 65 && c <= 90 ? String.fromCharCode(c + 32) : null;
        return;
      }
      // A lone surrogate is its own code point here, as codePointAt gives it.
      const cp = s.codePointAt(i)!;
      const w = cp > 0xffff ? 2 : 1;
      this.pos = i + w;
      const f = isSurrogate(cp) ? 0xfffd : fold(FOLD_TRI, cp);
      if (f === 0) continue;
      this.ns = i;
      this.ne = i + w;
      this.nf = f === cp ? null : String.fromCodePoint(f);
      return;
    }
    this.ns = -1;
  }

  /** Shift the pending character into the trigram. */
  private shift(): void {
    this.s0 = this.s1;
    this.e0 = this.e1;
    this.f0 = this.f1;
    this.s1 = this.s2;
    this.e1 = this.e2;
    this.f1 = this.f2;
    this.s2 = this.ns;
    this.e2 = this.ne;
    this.f2 = this.nf;
  }

  next(): boolean {
    if (this.state === 2) return false;
    const count = this.state === 0 ? 3 : 1;
    this.state = 1;
    for (let k = 0; k < count; k++) {
      if (count === 3) this.read();
      if (this.ns < 0) {
        this.state = 2;
        return false;
      }
      this.shift();
    }
    this.read();
    this.start = this.s0;
    this.end = this.ns < 0 ? this.src.length : this.ns;
    return true;
  }

  /** The folded trigram. */
  get text(): string {
    const s = this.src;
    if (this.f0 === null && this.f1 === null && this.f2 === null && this.s1 === this.e0 && this.s2 === this.e1) {
      return s.slice(this.s0, this.e2);
    }
    return (
      (this.f0 ?? s.slice(this.s0, this.e0)) +
      (this.f1 ?? s.slice(this.s1, this.e1)) +
      (this.f2 ?? s.slice(this.s2, this.e2))
    );
  }
}

export type Scanner = Unicode61Scanner | TrigramScanner;

export function scanner(text: string, mode: QueryMode, from = 0): Scanner {
  return mode === 'words' ? new Unicode61Scanner(text, from) : new TrigramScanner(text, from);
}

// --- arrays ------------------------------------------------------------------------------------------------

function collect(sc: Scanner): Token[] {
  const out: Token[] = [];
  while (sc.next()) out.push({ start: sc.start, end: sc.end, text: sc.text });
  return out;
}

/** The tokens FTS5's unicode61 tokenizer (default options) produces for `text`. */
export function unicode61Tokens(text: string): Token[] {
  return collect(new Unicode61Scanner(text));
}

/** The tokens FTS5's trigram tokenizer (case_sensitive=0, remove_diacritics=0) produces for `text`. */
export function trigramTokens(text: string): Token[] {
  return collect(new TrigramScanner(text));
}

/**
 * A query phrase's tokens as FTS5 sees them: the phrase text (as written inside the quotes) tokenized by
 * the table's tokenizer, unicode61 for 'words' and trigram for 'substrings'.
 */
export function phraseTokens(text: string, mode: QueryMode): string[] {
  return (mode === 'words' ? unicode61Tokens(text) : trigramTokens(text)).map((t) => t.text);
}
