/**
 * Turning stored rows into a replayable conversation, as Hermes' get_messages_as_conversation does,
 * including `sanitize_context` from agent/memory_manager.py.
 */
import { PY_WS, pyStrip } from '../codecs/python-text.js';
import { isTruthy } from '../codecs/json.js';
import type { ConversationMessage } from '../types.js';
import type { ReplayRow } from './rows.js';

const S = `[${PY_WS}]`;
const MEMORY_BLOCK = new RegExp(`<${S}*memory-context${S}*>[^]*?</${S}*memory-context${S}*>`, 'giu');
const SYSTEM_NOTE = new RegExp(
  `\\[System note:${S}*The following is recalled memory context,${S}*NOT new user input\\.${S}*` +
    `Treat as (?:informational background data|authoritative reference data[^\\]]*)\\.\\]${S}*`,
  'giu',
);
const STRAY_TAG = new RegExp(`</?${S}*memory-context${S}*>`, 'giu');

/**
 * Remove recalled-memory blocks, their system notes and stray tags (case-insensitive), in that order.
 * Tags need a `<` and notes a `[` (no other character folds to either, and removing text adds none), so
 * text without them, most of it, skips the scans.
 */
export function sanitizeContext(text: string): string {
  const tags = text.includes('<');
  if (tags) text = text.replace(MEMORY_BLOCK, '');
  if (text.includes('[')) text = text.replace(SYSTEM_NOTE, '');
  return tags ? text.replace(STRAY_TAG, '') : text;
}

export function toConversation(rows: readonly ReplayRow[], includeAncestors: boolean): ConversationMessage[] {
  const out: ConversationMessage[] = [];
  for (const row of rows) {
    let content = row.content;
    if ((row.role === 'user' || row.role === 'assistant') && typeof content === 'string') {
      content = pyStrip(sanitizeContext(content));
    }
    const message: ConversationMessage = { role: row.role, content };
    if (row.toolCallId) message.tool_call_id = row.toolCallId;
    if (row.toolName) message.tool_name = row.toolName;
    if (isTruthy(row.toolCalls)) message.tool_calls = row.toolCalls!;
    if (row.role === 'assistant') {
      if (row.finishReason) message.finish_reason = row.finishReason;
      if (row.reasoning) message.reasoning = row.reasoning;
      // Unlike `reasoning`, an empty reasoning_content is restored (providers distinguish "" from absent).
      if (row.reasoningContent !== null) message.reasoning_content = row.reasoningContent;
      if (isTruthy(row.reasoningDetails)) message.reasoning_details = row.reasoningDetails;
      if (isTruthy(row.codexReasoningItems)) message.codex_reasoning_items = row.codexReasoningItems;
      if (isTruthy(row.codexMessageItems)) message.codex_message_items = row.codexMessageItems;
    }
    if (includeAncestors && message.role === 'user' && isRepeatedPrompt(out, message.content)) continue;
    out.push(message);
  }
  return out;
}

/**
 * A user prompt repeated since the last real assistant turn (one with content or tool calls) is a resend
 * (on resume, or a double submit); tool messages and empty assistant turns do not end the scan.
 */
function isRepeatedPrompt(accepted: ConversationMessage[], content: ConversationMessage['content']): boolean {
  if (typeof content !== 'string' || content === '') return false;
  for (let i = accepted.length - 1; i >= 0; i--) {
    const earlier = accepted[i]!;
    if (earlier.role === 'assistant' && (isTruthy(earlier.content) || isTruthy(earlier.tool_calls))) return false;
    if (earlier.role === 'user' && earlier.content === content) return true;
  }
  return false;
}
