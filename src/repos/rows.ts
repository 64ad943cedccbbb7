/** Raw database rows (snake_case, driver values) to the API's values (camelCase, epoch seconds, parsed JSON). */
import { pyLen, pySlice, pyStrip } from '../codecs/python-text.js';
import type { ValueDecoders } from '../db/dialect.js';
import type { Row } from '../db/ops.js';
import { HERMES_SESSION_COLUMNS } from '../schema/hermes-columns.js';
import type { HandoffStatus, MessageRow, RichSessionRow, SessionRow, TelegramTopicBinding } from '../types.js';

const str = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));
/** handoff_state is written only by the handoff state machine (ours, or Hermes' own, which is the same). */
export const handoffStatusOrNull = (v: unknown): HandoffStatus | null => str(v) as HandoffStatus | null;

export function decodeSession(r: Row, d: ValueDecoders): SessionRow {
  return {
    id: String(r.id),
    source: String(r.source),
    userId: str(r.user_id),
    model: str(r.model),
    modelConfig: d.json(r.model_config),
    systemPrompt: d.freeText(r.system_prompt),
    parentSessionId: str(r.parent_session_id),
    startedAt: d.time(r.started_at),
    endedAt: d.timeOrNull(r.ended_at),
    endReason: str(r.end_reason),
    messageCount: d.int(r.message_count),
    toolCallCount: d.int(r.tool_call_count),
    inputTokens: d.int(r.input_tokens),
    outputTokens: d.int(r.output_tokens),
    cacheReadTokens: d.int(r.cache_read_tokens),
    cacheWriteTokens: d.int(r.cache_write_tokens),
    reasoningTokens: d.int(r.reasoning_tokens),
    billingProvider: str(r.billing_provider),
    billingBaseUrl: str(r.billing_base_url),
    billingMode: str(r.billing_mode),
    estimatedCostUsd:
      r.estimated_cost_usd === null || r.estimated_cost_usd === undefined ? null : Number(r.estimated_cost_usd),
    actualCostUsd: r.actual_cost_usd === null || r.actual_cost_usd === undefined ? null : Number(r.actual_cost_usd),
    costStatus: str(r.cost_status),
    costSource: str(r.cost_source),
    pricingVersion: str(r.pricing_version),
    title: str(r.title),
    apiCallCount: d.int(r.api_call_count),
    handoffState: handoffStatusOrNull(r.handoff_state),
    handoffPlatform: str(r.handoff_platform),
    handoffError: str(r.handoff_error),
  };
}

export function decodeMessage(r: Row, d: ValueDecoders): MessageRow {
  return {
    id: d.int(r.id),
    sessionId: String(r.session_id),
    role: String(r.role),
    content: d.content(r),
    toolCallId: d.freeText(r.tool_call_id),
    toolCalls: d.json(r.tool_calls),
    toolName: d.freeText(r.tool_name),
    timestamp: d.time(r.timestamp),
    tokenCount: d.intOrNull(r.token_count),
    finishReason: d.freeText(r.finish_reason),
    reasoning: d.freeText(r.reasoning),
    reasoningContent: d.freeText(r.reasoning_content),
    reasoningDetails: d.json(r.reasoning_details),
    codexReasoningItems: d.json(r.codex_reasoning_items),
    codexMessageItems: d.json(r.codex_message_items),
  };
}

/**
 * A message read as values (ops.values) with `d.messageColumns`, as the row decodeMessage takes: the same
 * keys in one fixed shape, which costs far less than the driver's keyed row object.
 */
export function messageRowFromValues(v: readonly unknown[]): Row {
  return {
    id: v[0],
    session_id: v[1],
    role: v[2],
    content: v[3],
    tool_call_id: v[4],
    tool_calls: v[5],
    tool_name: v[6],
    timestamp: v[7],
    token_count: v[8],
    finish_reason: v[9],
    reasoning: v[10],
    reasoning_content: v[11],
    reasoning_details: v[12],
    codex_reasoning_items: v[13],
    codex_message_items: v[14],
    content_json: v[15],
  };
}

/** The fields of a message a conversation replay uses: what Hermes' get_messages_as_conversation selects. */
export type ReplayRow = Pick<
  MessageRow,
  | 'role'
  | 'content'
  | 'toolCallId'
  | 'toolCalls'
  | 'toolName'
  | 'finishReason'
  | 'reasoning'
  | 'reasoningContent'
  | 'reasoningDetails'
  | 'codexReasoningItems'
  | 'codexMessageItems'
>;

/** A message read as values with `d.replayColumns`, decoded as decodeMessage decodes those fields. */
export function decodeReplayValues(v: readonly unknown[], d: ValueDecoders): ReplayRow {
  return {
    role: String(v[0]),
    content: d.content({ content: v[1], content_json: v[11] }),
    toolCallId: d.freeText(v[2]),
    toolCalls: d.json(v[3]),
    toolName: d.freeText(v[4]),
    finishReason: d.freeText(v[5]),
    reasoning: d.freeText(v[6]),
    reasoningContent: d.freeText(v[7]),
    reasoningDetails: d.json(v[8]),
    codexReasoningItems: d.json(v[9]),
    codexMessageItems: d.json(v[10]),
  };
}

/**
 * A message read as values with a packed replay column list (sql/replay-columns.ts packedReplayColumnList):
 * role, content, then the other columns as one array, or null when every one of them is null.
 */
export function decodePackedReplayValues(v: readonly unknown[], d: ValueDecoders): ReplayRow {
  const rest = v[2] as readonly unknown[] | null;
  if (rest !== null) return decodeReplayValues([v[0], v[1], ...rest], d);
  // What decodeReplayValues gives for those nulls.
  return {
    role: String(v[0]),
    content: d.content({ content: v[1], content_json: null }),
    toolCallId: null,
    toolCalls: null,
    toolName: null,
    finishReason: null,
    reasoning: null,
    reasoningContent: null,
    reasoningDetails: null,
    codexReasoningItems: null,
    codexMessageItems: null,
  };
}

/** Hermes' preview rule: strip, then the first 60 code points plus "..." when longer. */
export function previewFromRaw(raw: unknown): string {
  const text = pyStrip(typeof raw === 'string' ? raw : '');
  // 60 UTF-16 units hold at most 60 code points: only a longer text needs counting.
  return text.length > 60 && pyLen(text) > 60 ? `${pySlice(text, 60)}...` : text;
}

/** A session row with `last_active` and `_preview_raw` columns. */
export function decodeRichSession(r: Row, d: ValueDecoders): RichSessionRow {
  // Added to the decoded row rather than spread into a copy: V8 copies a 30-key object slowly (~20 µs).
  const row = decodeSession(r, d) as RichSessionRow;
  row.lastActive = d.time(r.last_active);
  row.preview = previewFromRaw(d.freeText(r._preview_raw));
  return row;
}

/** The columns a listed session is decoded from: a sessions row, the listing's own, and its tip's (`_tip_*`). */
const LISTED_COLUMNS = [
  ...HERMES_SESSION_COLUMNS,
  'last_active',
  '_preview_raw',
  '_tip_found',
  '_tip_ended_at',
  '_tip_end_reason',
  '_tip_message_count',
  '_tip_tool_call_count',
  '_tip_title',
  '_tip_last_active',
  '_tip_preview_raw',
  '_tip_model',
  '_tip_system_prompt',
] as const;

/** Where each listed column sits in a Table row; past its end when the statement has no such column (undefined). */
export type ListedPositions = Readonly<Record<(typeof LISTED_COLUMNS)[number], number>>;

const positionsByColumns = new Map<string, ListedPositions>();
let lastColumns: readonly string[] | undefined;
let lastPositions: ListedPositions | undefined;

/**
 * The positions of the listed columns among `columns` (a select list's names), found once per distinct list.
 * An absent column points past the end of the row (an in-bounds miss such as -1 is a slow lookup in V8).
 */
export function listedPositions(columns: readonly string[]): ListedPositions {
  // SQLite hands back the same names array for a statement each time.
  if (columns === lastColumns && lastPositions) return lastPositions;
  const key = columns.join(',');
  let at = positionsByColumns.get(key);
  if (!at) {
    // fromEntries keeps the object in fast mode (keyed adds past a dozen make V8 turn it into a dictionary).
    at = Object.fromEntries(
      LISTED_COLUMNS.map((name) => {
        const i = columns.indexOf(name);
        return [name, i < 0 ? columns.length : i];
      }),
    ) as ListedPositions;
    // A handful of select lists exist (per dialect, order and schema): bounded all the same.
    if (positionsByColumns.size >= 64) positionsByColumns.clear();
    positionsByColumns.set(key, at);
  }
  lastColumns = columns;
  lastPositions = at;
  return at;
}

/**
 * A listed session read as values (ops.table), as the keyed row decodeRichSession takes: one fixed shape,
 * far cheaper than the driver keying every column of every row (`s.*`).
 */
export function listedRowFromValues(v: readonly unknown[], at: ListedPositions): Row {
  return {
    id: v[at.id],
    source: v[at.source],
    user_id: v[at.user_id],
    model: v[at.model],
    model_config: v[at.model_config],
    system_prompt: v[at.system_prompt],
    parent_session_id: v[at.parent_session_id],
    started_at: v[at.started_at],
    ended_at: v[at.ended_at],
    end_reason: v[at.end_reason],
    message_count: v[at.message_count],
    tool_call_count: v[at.tool_call_count],
    input_tokens: v[at.input_tokens],
    output_tokens: v[at.output_tokens],
    cache_read_tokens: v[at.cache_read_tokens],
    cache_write_tokens: v[at.cache_write_tokens],
    reasoning_tokens: v[at.reasoning_tokens],
    billing_provider: v[at.billing_provider],
    billing_base_url: v[at.billing_base_url],
    billing_mode: v[at.billing_mode],
    estimated_cost_usd: v[at.estimated_cost_usd],
    actual_cost_usd: v[at.actual_cost_usd],
    cost_status: v[at.cost_status],
    cost_source: v[at.cost_source],
    pricing_version: v[at.pricing_version],
    title: v[at.title],
    api_call_count: v[at.api_call_count],
    handoff_state: v[at.handoff_state],
    handoff_platform: v[at.handoff_platform],
    handoff_error: v[at.handoff_error],
    last_active: v[at.last_active],
    _preview_raw: v[at._preview_raw],
    _tip_found: v[at._tip_found],
    _tip_ended_at: v[at._tip_ended_at],
    _tip_end_reason: v[at._tip_end_reason],
    _tip_message_count: v[at._tip_message_count],
    _tip_tool_call_count: v[at._tip_tool_call_count],
    _tip_title: v[at._tip_title],
    _tip_last_active: v[at._tip_last_active],
    _tip_preview_raw: v[at._tip_preview_raw],
    _tip_model: v[at._tip_model],
    _tip_system_prompt: v[at._tip_system_prompt],
  };
}

export function decodeBinding(r: Row, d: ValueDecoders): TelegramTopicBinding {
  return {
    chatId: String(r.chat_id),
    threadId: String(r.thread_id),
    userId: String(r.user_id),
    sessionKey: String(r.session_key),
    sessionId: String(r.session_id),
    managedMode: String(r.managed_mode),
    linkedAt: d.time(r.linked_at),
    updatedAt: d.time(r.updated_at),
  };
}

/** camelCase column keys back to the column names the decoders read (contentJson -> content_json). */
export function byColumnName(row: object): Row {
  const out: Row = {};
  for (const [key, value] of Object.entries(row)) out[key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)] = value;
  return out;
}
