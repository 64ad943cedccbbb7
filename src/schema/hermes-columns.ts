/**
 * The columns of Hermes' v11 sessions table, in table order: what a sessions row holds besides the columns this
 * library derives (last_message_at, chain_last_active). The listing decodes them by name and the import knows
 * them; test/parity.test.ts checks them against both Drizzle tables.
 */
export const HERMES_SESSION_COLUMNS = [
  'id',
  'source',
  'user_id',
  'model',
  'model_config',
  'system_prompt',
  'parent_session_id',
  'started_at',
  'ended_at',
  'end_reason',
  'message_count',
  'tool_call_count',
  'input_tokens',
  'output_tokens',
  'cache_read_tokens',
  'cache_write_tokens',
  'reasoning_tokens',
  'billing_provider',
  'billing_base_url',
  'billing_mode',
  'estimated_cost_usd',
  'actual_cost_usd',
  'cost_status',
  'cost_source',
  'pricing_version',
  'title',
  'api_call_count',
  'handoff_state',
  'handoff_platform',
  'handoff_error',
] as const;

/** Sessions columns this library adds and keeps by triggers (migrations *_session_activity*). */
export const DERIVED_SESSION_COLUMNS = ['last_message_at', 'chain_last_active'] as const;
