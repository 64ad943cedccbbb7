/**
 * Snippets computed outside the database (Postgres hits, and SQLite rows too big for FTS5's snippet()):
 * FTS5's own snippet algorithm (fts5-snippet.ts), with a cost bounded whatever the row's size.
 */
import { fts5Snippet } from './fts5-snippet.js';
import type { QueryNode } from './query.js';

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
