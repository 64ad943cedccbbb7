/**
 * SQLite FTS5's built-in snippet() auxiliary function (ext/fts5/fts5_aux.c: fts5SnippetFunction,
 * fts5SnippetScore, fts5SentenceFinderCb, fts5HighlightCb, fts5CInstIterNext), ported to TypeScript so the
 * snippet Hermes computes with `snippet(messages_fts, 0, '>>>', '<<<', '...', 40)` can be reproduced for
 * Postgres hits, and for huge rows on SQLite at a bounded cost.
 *
 * Differences from the C code, none of which changes a result:
 *  - scoring slides two windows over the position-ordered instances (O(n)) instead of rescoring every
 *    instance's window from scratch (O(n²)): each window's score, first/last instance and hence the chosen
 *    (first best) window are the same;
 *  - texts longer than SNIPPET_FULL_CHARS are not tokenized whole: see fts5Snippet().
 */
import {
  type CompiledPhrase,
  type CompiledQuery,
  type InstanceList,
  compile,
  countedPhrases,
  instancesOf,
} from './fts5-match.js';
import type { QueryMode, QueryNode } from './query.js';
import { type Scanner, scanner } from './tokenize.js';

export { MAX_SNIPPET_INSTANCES } from './fts5-match.js';

export interface SnippetOptions {
  open: string;
  close: string;
  ellipsis: string;
  /** The snippet's length in tokens (snippet()'s 5th argument). */
  tokens: number;
  /** 'words': the unicode61 table (messages_fts); 'substrings': the trigram table (messages_fts_trigram). */
  mode: QueryMode;
}

export const DEFAULT_SNIPPET_OPTIONS: SnippetOptions = {
  open: '>>>',
  close: '<<<',
  ellipsis: '...',
  tokens: 40,
  mode: 'words',
};

/** Texts up to this many UTF-16 units get the exact algorithm over the whole text. */
export const SNIPPET_FULL_CHARS = 16_384;
/** Longer texts: the region examined reaches at least this many UTF-16 units past the first match. */
export const SNIPPET_REGION_CHARS = 8_192;

// --- the algorithm -----------------------------------------------------------------------------------------

/**
 * A run of consecutive tokens of `text` (all of them, or a region of a long text). Offsets are into `text`;
 * positions are local (token `base` of the text is position 0).
 */
interface Region {
  text: string;
  starts: number[];
  ends: number[];
  /** Global position of the region's first token. */
  base: number;
  /** The region runs to the last token of the text. */
  complete: boolean;
  /** Offset of the region's end in `text` (the text's end when complete). */
  endOff: number;
  /** Instances at or after this local position are not scored (too close to an incomplete region's end). */
  scoreLimit: number;
}

const isFts5Space = (c: number) => c === 32 || c === 9 || c === 10 || c === 13;

/**
 * fts5SentenceFinderCb: the positions of tokens that start a sentence. The text's first token does; any
 * other token does when whitespace precedes it and the first non-whitespace character before that is '.'
 * or ':'. One forward pass, whatever the tokens' overlap (trigram tokens overlap); only positions up to
 * `upTo` (the last instance: later sentence starts are never looked at).
 */
function sentenceStarts(r: Region, upTo: number): number[] {
  const out: number[] = [];
  const s = r.text;
  let scan = -1; // s[..scan) has been examined
  let lastSolid = -1; // the last non-whitespace character before `scan`
  for (let k = 0; k <= upTo && k < r.starts.length; k++) {
    if (r.base + k === 0) {
      out.push(k);
      continue;
    }
    const start = r.starts[k]!;
    if (scan < 0) {
      // The first token examined: look backwards (its preceding whitespace, once).
      let i = start - 1;
      while (i >= 0 && isFts5Space(s.charCodeAt(i))) i--;
      lastSolid = i;
      scan = start;
    } else {
      for (; scan < start; scan++) if (!isFts5Space(s.charCodeAt(scan))) lastSolid = scan;
    }
    if (lastSolid !== start - 1 && lastSolid >= 0) {
      const c = s.charCodeAt(lastSolid);
      if (c === 46 || c === 58) out.push(k);
    }
  }
  return out;
}

/**
 * fts5SnippetScore over position-ordered instances for windows [L, L + nToken) with L never decreasing:
 * the instances in the window form a contiguous run [lo, hi) that only moves forward.
 */
class ScoreWindow {
  private lo = 0;
  private hi = 0;
  private distinct = 0;
  private readonly seen: Int32Array;

  constructor(
    private readonly inst: InstanceList,
    private readonly nToken: number,
  ) {
    this.seen = new Int32Array(inst.sizes.length);
  }

  /** Move the window to start at `from`; returns its score (1000 per phrase seen, 1 per repeat). */
  moveTo(from: number): number {
    const { pos, phrase, count } = this.inst;
    const to = from + this.nToken;
    while (this.hi < count && pos[this.hi]! < to) {
      if (this.seen[phrase[this.hi]!]!++ === 0) this.distinct++;
      this.hi++;
    }
    while (this.lo < this.hi && pos[this.lo]! < from) {
      if (--this.seen[phrase[this.lo]!]! === 0) this.distinct--;
      this.lo++;
    }
    return 1000 * this.distinct + (this.hi - this.lo - this.distinct);
  }

  /** fts5SnippetScore's adjusted start: the window centred on its instances, inside the document. */
  adjusted(nDocsize: number): number {
    const { pos, phrase, sizes } = this.inst;
    const iFirst = this.lo < this.hi ? pos[this.lo]! : -1;
    const iLast = this.lo < this.hi ? pos[this.hi - 1]! + sizes[phrase[this.hi - 1]!]! : 0;
    let iAdj = iFirst - Math.trunc((this.nToken - (iLast - iFirst)) / 2);
    if (iAdj + this.nToken > nDocsize) iAdj = nDocsize - this.nToken;
    if (iAdj < 0) iAdj = 0;
    return iAdj;
  }
}

/** fts5SnippetFunction for one column, over a region of its tokens. */
function snippetOf(r: Region, inst: InstanceList, o: SnippetOptions): string {
  const nToken = o.tokens;
  const m = r.starts.length;
  const nDocsize = r.complete ? m : Number.MAX_SAFE_INTEGER / 4;

  // Choose the window: for each instance, the window centred on it, then the sentence it starts in.
  let bestScore = 0;
  let bestStart = 0;
  const nScored = Math.min(inst.count, lowerBound(inst.pos, inst.count, r.scoreLimit));
  if (nScored > 0) {
    const aFirst = nDocsize > nToken ? sentenceStarts(r, inst.pos[nScored - 1]!) : [];
    const main = new ScoreWindow(inst, nToken);
    const sentence = new ScoreWindow(inst, nToken);
    let jj = 0;
    for (let ii = 0; ii < nScored; ii++) {
      const io = inst.pos[ii]!;
      const score = main.moveTo(io);
      if (score > bestScore) {
        bestScore = score;
        bestStart = main.adjusted(nDocsize);
      }
      if (aFirst.length > 0) {
        while (jj < aFirst.length - 1 && aFirst[jj + 1]! <= io) jj++;
        const first = aFirst[jj]!;
        if (first < io) {
          const s = sentence.moveTo(first) + (r.base + first === 0 ? 120 : 100);
          if (s > bestScore) {
            bestScore = s;
            bestStart = first;
          }
        }
      }
    }
  }

  // Highlight the window's tokens (fts5HighlightCb) over coalesced instances (fts5CInstIterNext).
  const { text, starts, ends } = r;
  // fts5HighlightAppend copies each piece of the text with "%.*s", which stops at a NUL: a piece holding one
  // (structured content is stored as "\x00json:" + JSON) is cut there.
  const segment = (from: number, to: number) => {
    const piece = text.slice(from, to);
    const nul = piece.indexOf('\u0000');
    return nul < 0 ? piece : piece.slice(0, nul);
  };
  const out: string[] = [];
  const rangeStart = bestStart;
  const rangeEnd = bestStart + nToken - 1;
  if (r.base + bestStart > 0) out.push(o.ellipsis);
  let it = 0;
  let cStart = -1;
  let cEnd = -1;
  const nextCInst = () => {
    cStart = -1;
    cEnd = -1;
    while (it < inst.count) {
      const io = inst.pos[it]!;
      const e = io - 1 + inst.sizes[inst.phrase[it]!]!;
      if (cStart < 0) {
        cStart = io;
        cEnd = e;
      } else if (io <= cEnd) {
        if (e > cEnd) cEnd = e;
      } else break;
      it++;
    }
  };
  nextCInst();
  while (cStart >= 0 && cStart < rangeStart) nextCInst();
  let iOff = r.base === 0 ? 0 : (starts[0] ?? 0);
  let open = false;
  const last = Math.min(rangeEnd, m - 1);
  for (let iPos = rangeStart; iPos <= last; iPos++) {
    const startOff = starts[iPos]!;
    const endOff = ends[iPos]!;
    if (r.base + rangeStart !== 0 && iPos === rangeStart) iOff = startOff;
    if (open && (iPos <= cStart || cStart < 0) && startOff > iOff) {
      out.push(o.close);
      open = false;
    }
    if (iPos === cStart && !open) {
      out.push(segment(iOff, startOff), o.open);
      iOff = startOff;
      open = true;
    }
    if (iPos === cEnd) {
      if (!open) {
        out.push(o.open);
        open = true;
      }
      out.push(segment(iOff, endOff));
      iOff = endOff;
      nextCInst();
    }
    if (iPos === rangeEnd) {
      if (open) {
        if (cStart >= 0 && iPos >= cStart) {
          out.push(segment(iOff, endOff));
          iOff = endOff;
        }
        out.push(o.close);
        open = false;
      }
      out.push(segment(iOff, endOff));
      iOff = endOff;
    }
  }
  if (open) out.push(o.close);
  if (rangeEnd >= nDocsize - 1) out.push(segment(iOff, r.endOff));
  else out.push(o.ellipsis);
  return out.join('');
}

function lowerBound(a: Int32Array, n: number, value: number): number {
  let lo = 0;
  let hi = n;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (a[mid]! < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

// --- entry points ------------------------------------------------------------------------------------------

const withDefaults = (options?: Partial<SnippetOptions>): SnippetOptions => ({
  ...DEFAULT_SNIPPET_OPTIONS,
  ...options,
});

/** FTS5's snippet() over the whole text, whatever its length (cost linear in the text, n log n in matches). */
export function fts5SnippetFull(text: string, root: QueryNode, options?: Partial<SnippetOptions>): string {
  const o = withDefaults(options);
  const q = compile(root, o.mode);
  const sc = scanner(text, o.mode);
  const starts: number[] = [];
  const ends: number[] = [];
  const texts: string[] = [];
  while (sc.next()) {
    starts.push(sc.start);
    ends.push(sc.end);
    texts.push(sc.text);
  }
  const region: Region = {
    text,
    starts,
    ends,
    base: 0,
    complete: true,
    endOff: text.length,
    scoreLimit: starts.length,
  };
  return snippetOf(region, instancesOf(q, texts), o);
}

/** Where a phrase first occurs in a long text, and where a region around it would start. */
interface FirstOccurrence {
  /** Global position of the instance's first token. */
  at: number;
  /** Global position and offset of the token the region starts with (some tokens before the instance). */
  regionBase: number;
  regionOff: number;
  /** Offset of the instance's first token. */
  off: number;
}

/**
 * A streaming pass over a long text that records the first occurrence of every phrase, keeping nothing but
 * a ring of the last few tokens. It can stop (all phrases seen, or a budget spent) and resume.
 */
class PresenceScan {
  readonly found = new Map<number, FirstOccurrence>();
  /** The scan reached the end of the text: phrases not found do not occur. */
  exhausted = false;
  /** Offset of the first occurrence of any phrase (-1: none yet). */
  firstOff = -1;
  private remaining: number;
  private g = 0;
  private readonly sc: Scanner;
  private readonly exact = new Map<string, CompiledPhrase[]>();
  private readonly prefix = new Map<number, CompiledPhrase[]>();
  private readonly ringSize: number;
  private readonly ringText: string[];
  private readonly ringStart: Int32Array;

  constructor(
    text: string,
    q: CompiledQuery,
    mode: QueryMode,
    private readonly lead: number,
  ) {
    const live = q.phrases.filter((p) => p.tokens.length > 0);
    this.remaining = live.length;
    // Phrases by their last token (exact), and prefix phrases by the first unit of theirs.
    for (const p of live) {
      const last = p.tokens[p.tokens.length - 1]!;
      if (p.prefix) {
        const key = last.charCodeAt(0);
        this.prefix.set(key, [...(this.prefix.get(key) ?? []), p]);
      } else this.exact.set(last, [...(this.exact.get(last) ?? []), p]);
    }
    this.ringSize = lead + q.maxLength + 1;
    this.ringText = new Array<string>(this.ringSize).fill('');
    this.ringStart = new Int32Array(this.ringSize);
    this.sc = scanner(text, mode);
  }

  private check(p: CompiledPhrase, g: number): void {
    if (this.found.has(p.index)) return;
    const n = p.tokens.length;
    const at = g - n + 1;
    if (at < 0) return;
    const { ringText, ringStart, ringSize } = this;
    for (let j = 0; j < n - 1; j++) if (ringText[(at + j) % ringSize] !== p.tokens[j]) return;
    const regionBase = Math.max(0, at - this.lead);
    const off = ringStart[at % ringSize]!;
    this.found.set(p.index, {
      at,
      regionBase,
      regionOff: regionBase === 0 ? 0 : ringStart[regionBase % ringSize]!,
      off,
    });
    if (this.firstOff < 0) this.firstOff = off;
    this.remaining--;
  }

  /** Scan on until every phrase has been seen, the end, or a token starting past `limit()`. */
  run(limit: () => number): void {
    const { sc, ringText, ringStart, ringSize } = this;
    while (this.remaining > 0 && !this.exhausted) {
      if (!sc.next()) {
        this.exhausted = true;
        break;
      }
      const g = this.g++;
      const t = sc.text;
      ringText[g % ringSize] = t;
      ringStart[g % ringSize] = sc.start;
      const byExact = this.exact.get(t);
      if (byExact) for (const p of byExact) this.check(p, g);
      const byPrefix = t.length > 0 ? this.prefix.get(t.charCodeAt(0)) : undefined;
      if (byPrefix) for (const p of byPrefix) if (t.startsWith(p.tokens[p.tokens.length - 1]!)) this.check(p, g);
      if (sc.start > limit()) break;
    }
  }

  /** Every phrase's presence is known: all were seen, or the scan reached the end. */
  get complete(): boolean {
    return this.remaining === 0 || this.exhausted;
  }
}

/** How far past the first occurrence of any phrase the presence scan reads, at most (UTF-16 units). */
export const SNIPPET_SCAN_CHARS = 65_536;

/**
 * FTS5's snippet() for `text` matched by `root` (from parseQuery), e.g.
 * `fts5Snippet('Use docker compose up.  ', root)` gives `'Use >>>docker<<< compose up.  '`.
 *
 * Texts up to SNIPPET_FULL_CHARS get the exact algorithm (fts5SnippetFull). Longer ones are not tokenized
 * whole:
 *  1. a streaming pass finds the first occurrence of every phrase; it stops once all have been seen, or
 *     SNIPPET_SCAN_CHARS past the first occurrence of any (phrases not seen by then are taken to be absent
 *     or present, whichever makes the row match; they cannot occur in the region below);
 *  2. that decides which phrases count for the row (FTS5 ignores, e.g., a NOT's right side and the
 *     non-matching branches of an OR);
 *  3. the exact algorithm runs on a region of tokens starting `tokens` + 8 tokens before the first
 *     instance that counts and reaching at least SNIPPET_REGION_CHARS past it, plus enough tokens for any
 *     window chosen in it to be complete. Positions, sentence starts and ellipses are those of the whole
 *     text, so the result is FTS5's whenever FTS5's best window lies in the region (it may lie further on:
 *     FTS5 scores every window of the row).
 * Cost: linear up to the first match, then bounded (SNIPPET_SCAN_CHARS + the region), whatever the number
 * of matches (at most MAX_SNIPPET_INSTANCES are scored).
 */
export function fts5Snippet(text: string, root: QueryNode, options?: Partial<SnippetOptions>): string {
  const o = withDefaults(options);
  if (text.length <= SNIPPET_FULL_CHARS) return fts5SnippetFull(text, root, o);
  const q = compile(root, o.mode);
  const lead = Math.max(0, o.tokens) + 8;
  const scan = new PresenceScan(text, q, o.mode, lead);
  scan.run(() => (scan.firstOff < 0 ? Infinity : scan.firstOff + SNIPPET_SCAN_CHARS));
  let counted = countedPhrases(q, (p) => scan.found.has(p.index), scan.complete);
  const firstCounted = () => {
    let first: FirstOccurrence | null = null;
    for (const i of counted) {
      const f = scan.found.get(i);
      if (f && (first === null || f.at < first.at)) first = f;
    }
    return first;
  };
  let first = firstCounted();
  if (first === null && !scan.complete) {
    // Only phrases that do not count were seen so far: read on (to the end if need be).
    scan.run(() => Infinity);
    counted = countedPhrases(q, (p) => scan.found.has(p.index), scan.complete);
    first = firstCounted();
  }
  const base = first?.regionBase ?? 0;
  const sc = scanner(text, o.mode, first?.regionOff ?? 0);
  const starts: number[] = [];
  const ends: number[] = [];
  const texts: string[] = [];
  const margin = Math.max(0, o.tokens) + q.maxLength + 1;
  // The scored part: to SNIPPET_REGION_CHARS past the first instance (no instances: the first window).
  const scoredUntil = first === null ? 0 : first.off + SNIPPET_REGION_CHARS;
  let scoreLimit = -1;
  let complete = false;
  for (;;) {
    if (scoreLimit < 0 && starts.length > lead && starts[starts.length - 1]! >= scoredUntil) scoreLimit = starts.length;
    if (scoreLimit >= 0 && starts.length >= scoreLimit + margin) break;
    if (!sc.next()) {
      complete = true;
      break;
    }
    starts.push(sc.start);
    ends.push(sc.end);
    texts.push(sc.text);
  }
  if (!complete) complete = !sc.next();
  if (complete || scoreLimit < 0) scoreLimit = starts.length;
  const region: Region = {
    text,
    starts,
    ends,
    base,
    complete,
    endOff: complete ? text.length : (ends[ends.length - 1] ?? text.length),
    scoreLimit,
  };
  return snippetOf(region, instancesOf(q, texts, counted), o);
}
