/** The text of a message the search index holds, from the columns as Postgres returns them. */
import { STRUCTURED_PREFIX } from '../../codecs/content.js';
import type { JsonValue } from '../../codecs/json.js';
import { pythonJsonDumps } from '../../codecs/python-json.js';
import { decodePgJson, decodePgText } from './nul-escape.js';

/** JSON as Hermes writes it (Python's json.dumps) from a jsonb value the driver parsed. */
const hermesJson = (value: unknown) => pythonJsonDumps(decodePgJson(value as JsonValue));

/**
 * A message's searchable text as Hermes' FTS5 tables index it: content (structured content as SQLite stores it),
 * tool name and tool calls, their JSON written as Python writes it (non-ASCII escaped, as Hermes leaves it).
 * jsonb keeps no key order, so keys may come in another order than Hermes wrote them.
 */
export function searchableText(row: Record<string, unknown>): string {
  const content =
    row.content_json !== null && row.content_json !== undefined
      ? STRUCTURED_PREFIX + hermesJson(row.content_json)
      : typeof row.content === 'string'
        ? decodePgText(row.content)
        : '';
  const toolName = typeof row.tool_name === 'string' ? decodePgText(row.tool_name) : '';
  const toolCalls = row.tool_calls !== null && row.tool_calls !== undefined ? hermesJson(row.tool_calls) : '';
  return `${content} ${toolName} ${toolCalls}`;
}
