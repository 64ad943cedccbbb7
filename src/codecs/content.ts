/**
 * Message content: a string, or structured content (a list of parts, or an object) as multimodal models
 * send it. SQLite stores structured content as `"\x00json:" + json.dumps(value)` in the TEXT column, as
 * Hermes does since v2026.5.7; Postgres keeps it in `content_json` (jsonb), because Postgres text cannot
 * hold a NUL byte.
 */
import type { JsonInput, JsonValue } from './json.js';
import { pythonJsonDumps } from './python-json.js';

export type MessageContent = string | JsonValue[] | { [key: string]: JsonValue };
/** Content as callers pass it (see JsonInput). */
export type MessageContentInput = string | readonly JsonInput[] | { readonly [key: string]: JsonInput | undefined };

export const STRUCTURED_PREFIX = '\u0000json:';

export function isStructured(content: unknown): content is Exclude<MessageContentInput, string> {
  return typeof content === 'object' && content !== null;
}

/**
 * SQLite TEXT form of a content value. A plain string that itself starts with the marker is stored as
 * the marker and a JSON string, so that it reads back as that string, here and in Hermes (whose decoder
 * returns whatever the JSON holds), instead of as the structured value its tail may spell.
 */
export function encodeStoredContent(content: MessageContentInput | null | undefined): string | null {
  if (content === null || content === undefined) return null;
  if (isStructured(content) || content.startsWith(STRUCTURED_PREFIX))
    return STRUCTURED_PREFIX + pythonJsonDumps(content);
  return content;
}

/** Read SQLite TEXT content: the `"\x00json:"` form becomes the value; text that fails to parse stays text. */
export function decodeStoredContent(stored: string | null): MessageContent | null {
  if (stored === null || !stored.startsWith(STRUCTURED_PREFIX)) return stored;
  try {
    return JSON.parse(stored.slice(STRUCTURED_PREFIX.length)) as MessageContent;
  } catch {
    return stored;
  }
}

/**
 * A short plain-text rendering of content (search context, previews of structured messages): the `text`
 * of `type: "text"` parts joined by spaces, or "[multimodal content]" when there is none (Hermes §3.6).
 */
export function contentPreviewText(content: MessageContent | null): string {
  if (content === null) return '';
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    const text = content
      .filter((p): p is { [key: string]: JsonValue } => typeof p === 'object' && p !== null && !Array.isArray(p))
      .filter((p) => p.type === 'text' && typeof p.text === 'string')
      .map((p) => p.text as string)
      .join(' ')
      .trim();
    return text || '[multimodal content]';
  }
  return '';
}
