/**
 * The export in Hermes' `export_session` shape, for Python tools: snake_case keys in Hermes' column order,
 * `model_config`, `reasoning_details` and the two codex fields as JSON text (Python's json.dumps format,
 * as get_messages returns them), `tool_calls` and content parsed.
 */
import type { MessageRow, SessionExport, SessionRow } from '../types.js';
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
