/**
 * The export in Hermes' `export_session` shape, for Python tools: snake_case keys in Hermes' column order,
 * `model_config`, `reasoning_details` and the two codex fields as JSON text (Python's json.dumps format,
 * as get_messages returns them), `tool_calls` and content parsed.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { SessionStore } from '../store.js';
import type { MessageRow, SessionExport, SessionRow } from '../types.js';
import * as v from '../validation.js';
import { pythonJsonDumps } from './python-json.js';

const jsonText = (v: unknown) => (v === null || v === undefined ? null : pythonJsonDumps(v));

export function hermesSession(s: SessionRow): Record<string, unknown> {
  return {
    id: s.id,
    source: s.source,
    user_id: s.userId,
    model: s.model,
    model_config: jsonText(s.modelConfig),
    system_prompt: s.systemPrompt,
    parent_session_id: s.parentSessionId,
    started_at: s.startedAt,
    ended_at: s.endedAt,
    end_reason: s.endReason,
    message_count: s.messageCount,
    tool_call_count: s.toolCallCount,
    input_tokens: s.inputTokens,
    output_tokens: s.outputTokens,
    cache_read_tokens: s.cacheReadTokens,
    cache_write_tokens: s.cacheWriteTokens,
    reasoning_tokens: s.reasoningTokens,
    billing_provider: s.billingProvider,
    billing_base_url: s.billingBaseUrl,
    billing_mode: s.billingMode,
    estimated_cost_usd: s.estimatedCostUsd,
    actual_cost_usd: s.actualCostUsd,
    cost_status: s.costStatus,
    cost_source: s.costSource,
    pricing_version: s.pricingVersion,
    title: s.title,
    api_call_count: s.apiCallCount,
    handoff_state: s.handoffState,
    handoff_platform: s.handoffPlatform,
    handoff_error: s.handoffError,
  };
}

export function hermesMessage(m: MessageRow): Record<string, unknown> {
  return {
    id: m.id,
    session_id: m.sessionId,
    role: m.role,
    content: m.content,
    tool_call_id: m.toolCallId,
    tool_calls: m.toolCalls,
    tool_name: m.toolName,
    timestamp: m.timestamp,
    token_count: m.tokenCount,
    finish_reason: m.finishReason,
    reasoning: m.reasoning,
    reasoning_content: m.reasoningContent,
    reasoning_details: jsonText(m.reasoningDetails),
    codex_reasoning_items: jsonText(m.codexReasoningItems),
    codex_message_items: jsonText(m.codexMessageItems),
  };
}

/** One session as Hermes' export_session returns it: its columns plus `messages`. */
export function hermesExport(s: SessionExport): Record<string, unknown> {
  return { ...hermesSession(s), messages: s.messages.map(hermesMessage) };
}

/** Messages read per query by a streamed export. */
const EXPORT_PAGE = 1_000;
/** A streamed export hands its output over in pieces of about this many characters. */
const EXPORT_CHUNK_CHARS = 1 << 20;
/** The longest stretch of reading and encoding between event-loop turns. */
const EXPORT_TURN_MS = 10;

export interface HermesExportOptions {
  /** Only this session (`source` is then ignored); otherwise exportAll's sessions, in its order and cap. */
  sessionId?: string;
  /** Only sessions of this source. */
  source?: string | null;
}

export interface HermesExportCounts {
  sessions: number;
  messages: number;
}

/**
 * Write the export as JSON lines, exactly `JSON.stringify(hermesExport(s)) + "\n"` per session of
 * exportAll (or exportSession), without holding it: session ids are read first, then each session's
 * columns with its first page of messages, then further pages; the text goes to `write` in pieces of
 * about 1 MiB (a returned promise is awaited, so a slow writer holds the reading back), with an
 * event-loop turn at least every 10 ms. A long session's later pages are separate reads, so messages
 * appended during the export may appear without the counters that count them.
 */
export async function writeHermesExport(
  store: SessionStore,
  write: (chunk: string) => void | Promise<void>,
  options: HermesExportOptions = {},
): Promise<HermesExportCounts> {
  const o = v.validate(v.exportStreamOptions, options, 'options');
  const ids = o.sessionId !== undefined ? [o.sessionId] : await store.exports.sessionIdsByActivity(o.source);
  const counts: HermesExportCounts = { sessions: 0, messages: 0 };
  let pending = '';
  let turnStarted = performance.now();
  const emit = async (text: string) => {
    pending += text;
    if (pending.length >= EXPORT_CHUNK_CHARS) {
      const chunk = pending;
      pending = '';
      await write(chunk);
    }
    if (performance.now() - turnStarted >= EXPORT_TURN_MS) {
      await nextTurn();
      turnStarted = performance.now();
    }
  };
  for (const id of ids) {
    const head = await store.exports.sessionHead(id, EXPORT_PAGE);
    if (!head) continue; // deleted since the ids were read
    // The line JSON.stringify gives for { ...columns, messages }: the columns' object, opened up.
    await emit(`${JSON.stringify(hermesSession(head.session)).slice(0, -1)},"messages":[`);
    let page = head.messages;
    for (let first = true; page.length > 0; first = false) {
      await emit(`${first ? '' : ','}${page.map((m) => JSON.stringify(hermesMessage(m))).join(',')}`);
      counts.messages += page.length;
      if (page.length < EXPORT_PAGE) break;
      page = await store.exports.sessionMessagePage(id, page[page.length - 1]!.id, EXPORT_PAGE);
    }
    await emit(']}\n');
    counts.sessions++;
  }
  if (pending.length > 0) await write(pending);
  return counts;
}
