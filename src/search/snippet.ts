/**
 * Snippets computed outside the database (Postgres hits, and SQLite rows too big for FTS5's snippet()):
 * FTS5's own snippet algorithm (fts5-snippet.ts), with a cost bounded whatever the row's size.
 */
import { fts5Snippet } from './fts5-snippet.js';
import type { QueryNode } from './query.js';

/** How much of a huge row's text a snippet may look at (characters): bounded work whatever the row's size. */
export const SNIPPET_HEAD_CHARS = 65_536;
/**
 * What a pageText read sends of a huge row: the head plus one character, so that the reader learns whether
 * there is more without the database measuring the whole row (SQLite's length() walks all of a 1 MB text).
 */
export const SNIPPET_HEAD_READ_CHARS = SNIPPET_HEAD_CHARS + 1;

/**
 * The snippet FTS5's snippet(…, '>>>', '<<<', '...', 40) gives for `text`. `truncated` says `text` is only
 * the head of the row's indexed text (huge rows send no more), so there is more after it.
 */
export function boundedSnippet(
  text: string,
  match: QueryNode,
  path: 'words' | 'substrings',
  truncated: boolean,
): string {
  const out = fts5Snippet(text, match, { mode: path });
  return truncated && !out.endsWith('...') ? `${out}...` : out;
}
