/**
 * Comparing two stores (or a Hermes file and a store): the same sessions, the same number of messages in
 * each, the same content (a digest per session over the API's values, so SQLite and Postgres compare
 * equal), the same meta and topic rows, and a few search spot-checks.
 */
import crypto from 'node:crypto';
import { roundToMicros } from '../codecs/time.js';
import type { SessionStore } from '../store.js';
import type { MessageRow } from '../types.js';

export interface VerifyReport {
  ok: boolean;
  sessions: { from: number; to: number };
  messages: { from: number; to: number };
  /** Human-readable differences (the first few of each kind). */
  problems: string[];
  /** Search terms checked, with whether both sides found the same messages. */
  spotChecks: Array<{ query: string; same: boolean }>;
}

const MAX_PROBLEMS = 20;

/** JSON with object keys sorted: Postgres' jsonb reorders keys, so digests must not depend on key order. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** A digest of a session's messages over the values every backend returns (times to the microsecond). */
export function messagesDigest(messages: MessageRow[]): string {
  const hash = crypto.createHash('sha256');
  for (const m of messages) {
    hash.update(
      canonical([m.id, m.role, m.content, m.toolCallId, m.toolCalls, m.toolName, roundToMicros(m.timestamp), m.tokenCount,
        m.finishReason, m.reasoning, m.reasoningContent, m.reasoningDetails, m.codexReasoningItems, m.codexMessageItems]),
    );
    hash.update('\n');
  }
  return hash.digest('hex');
}

/** Words worth searching for: a few distinct alphabetic words of 5+ letters from the first messages. */
function spotTerms(messages: MessageRow[], count: number): string[] {
  const terms = new Set<string>();
  for (const m of messages) {
    if (typeof m.content !== 'string') continue;
    for (const w of m.content.match(/\b[A-Za-z]{5,}\b/g) ?? []) {
      terms.add(w.toLowerCase());
      if (terms.size >= count) return [...terms];
    }
  }
  return [...terms];
}

export async function verifyStores(from: SessionStore, to: SessionStore): Promise<VerifyReport> {
  const problems: string[] = [];
  const note = (p: string) => {
    if (problems.length < MAX_PROBLEMS) problems.push(p);
  };
  const a = await from.exportAll();
  const b = new Map((await to.exportAll()).map((s) => [s.id, s]));
  let fromMessages = 0;
  const sample: MessageRow[] = [];
  for (const s of a) {
    fromMessages += s.messages.length;
    if (sample.length < 200) sample.push(...s.messages.slice(0, 5));
    const t = b.get(s.id);
    if (!t) {
      note(`session ${s.id} is missing`);
      continue;
    }
    if (t.messages.length !== s.messages.length) note(`session ${s.id}: ${s.messages.length} messages, ${t.messages.length} in the target`);
    else if (messagesDigest(t.messages) !== messagesDigest(s.messages)) note(`session ${s.id}: message content differs`);
    if (t.title !== s.title || t.source !== s.source || t.parentSessionId !== s.parentSessionId) note(`session ${s.id}: fields differ`);
  }
  const toMessages = [...b.values()].reduce((n, s) => n + s.messages.length, 0);
  const inSource = new Set(a.map((s) => s.id));
  for (const id of b.keys()) if (!inSource.has(id)) note(`session ${id} is only in the target`);
  for (const key of ['telegram_dm_topic_schema_version', 'last_auto_prune']) {
    if ((await from.getMeta(key)) !== (await to.getMeta(key))) note(`meta ${key} differs`);
  }
  const spotChecks: VerifyReport['spotChecks'] = [];
  for (const query of spotTerms(sample, 5)) {
    const ids = async (s: SessionStore) => (await s.searchMessages(query, { limit: -1, sort: 'oldest' })).map((h) => h.id).join(',');
    const same = (await ids(from)) === (await ids(to));
    spotChecks.push({ query, same });
    if (!same) note(`search "${query}" finds different messages`);
  }
  return {
    ok: problems.length === 0,
    sessions: { from: a.length, to: b.size },
    messages: { from: fromMessages, to: toMessages },
    problems,
    spotChecks,
  };
}
