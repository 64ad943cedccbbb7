/**
 * getMessagesAsConversation against Hermes' own logic (spec: get_messages_as_conversation), at scale, on
 * every backend: a Hermes-format state.db holding a 5-session compression chain of 1,000 messages whose
 * ids interleave with each other and with 1,000 other sessions, every replay rule's edge cases (memory
 * blocks, system notes, whitespace, structured and marker-looking content, NUL, resent prompts, tool calls,
 * reasoning fields empty and absent), a parent cycle and a chain past the 100-hop bound. The oracle reads
 * the file with Hermes' SQL (parent walk in code, then one SELECT … ORDER BY id) and applies its per-row
 * rules as the spec states them; each backend reads the file imported with our importer, and SQLite also
 * reads the file itself.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SessionStore, importHermesStateDb, openStore } from '../src/index.js';
import { PY_WS } from '../src/codecs/python-text.js';
import { type Harness, pgliteHarness, postgresHarness, reportAvailability, sqliteFileHarness } from './backends.js';
import { HERMES_V11_DDL } from './helpers/hermes-schema.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hsdb-conversation-oracle-'));
const file = path.join(dir, 'state.db');
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A small deterministic PRNG (mulberry32): the same file on every run. */
function prng(seed: number) {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const CHAIN = ['chain-0', 'chain-1', 'chain-2', 'chain-3', 'chain-4'];
const CHAIN_SIZES = [188, 188, 187, 187, 250];
const LONG = Array.from({ length: 120 }, (_, i) => `long-${i}`);
const CYCLE = ['cyc-x', 'cyc-y', 'cyc-z'];
const OTHERS = Array.from({ length: 1000 }, (_, i) => `other-${i}`);

const NOTE =
  '[System note: The following is recalled memory context, NOT new user input. Treat as informational background data.]';
const json = (v: unknown) => JSON.stringify(v);

/** Writes the Hermes-format file; returns nothing, the oracle reads the file. */
function writeFile(): void {
  const random = prng(13);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.exec(HERMES_V11_DDL);
  db.prepare('INSERT INTO schema_version (version) VALUES (11)').run();
  const session = db.prepare(
    'INSERT INTO sessions (id, source, parent_session_id, started_at, ended_at, end_reason) VALUES (?, ?, ?, ?, ?, ?)',
  );
  const message = db.prepare(`INSERT INTO messages (session_id, role, content, tool_call_id, tool_calls, tool_name,
    timestamp, finish_reason, reasoning, reasoning_content, reasoning_details, codex_reasoning_items, codex_message_items)
    VALUES (@session, @role, @content, @callId, @calls, @tool, @at, @finish, @reasoning, @reasoningContent, @details,
    @codexReasoning, @codexMessages)`);
  let t = 1_793_000_000.123456;
  const prompts: string[] = [];
  const content = (role: string): string | null => {
    const words = Array.from({ length: 1 + Math.floor(random() * 12) }, () =>
      pick(['deploy', 'nginx', 'Straße', '部署', 'logs', 'a<b', 'x[0]', 'ok', '😀', '']),
    ).join(' ');
    switch (Math.floor(random() * 16)) {
      case 0:
        return null;
      case 1:
        return '';
      case 2:
        return `  ${words}\u3000\n`;
      case 3:
        return `<memory-context>recalled ${words}</memory-context>\n${words}`;
      case 4:
        return `${NOTE} ${words}`;
      case 5:
        return `${words} </MEMORY-context > tail\u001c`;
      case 6:
        return `\u0000json:${json([
          { type: 'text', text: words },
          { type: 'image_url', image_url: { url: 'data:x' } },
        ])}`;
      case 7:
        return '\u0000json:{not json';
      case 8:
        return `nul\u0000${words}`;
      case 9:
        // U+FEFF is not whitespace to str.strip. (Trailing: PGlite drops a value's leading U+FEFF as it decodes
        // text, a loss of its own that this test is not about.)
        return `${words}\u0085\ufeff`;
      case 10:
        // A prompt sent before: dropped with ancestors until an assistant turn with content or tool calls.
        return role === 'user' && prompts.length > 0 ? pick(prompts) : words;
      case 11:
        return `<Memory-Context>${words}`;
      default: {
        const text = `${words} ${Math.floor(random() * 1000)}`;
        if (role === 'user') prompts.push(text);
        return text;
      }
    }
  };
  const jsonField = () => pick([null, null, null, '[]', '{}', 'null', '0', '""', json([{ id: 'r', n: 1 }])]);
  const row = (sessionId: string) => {
    const role = pick(['user', 'user', 'assistant', 'assistant', 'tool', 'system']);
    t += 0.25;
    return {
      session: sessionId,
      role,
      content: content(role),
      callId: pick([null, null, '', 'call_1']),
      calls: pick([
        null,
        null,
        null,
        '[]',
        '{}',
        '""',
        json([{ id: 'call_1', type: 'function', function: { name: 'terminal', arguments: json({ command: 'ls' }) } }]),
      ]),
      tool: pick([null, null, '', 'terminal']),
      at: t,
      finish: pick([null, null, '', 'stop', 'tool_calls']),
      reasoning: pick([null, null, '', 'think first']),
      reasoningContent: pick([null, null, '', 'step by step']),
      details: jsonField(),
      codexReasoning: jsonField(),
      codexMessages: jsonField(),
    };
  };

  db.transaction(() => {
    CHAIN.forEach((id, k) => {
      const started = t + k * 1000;
      session.run(
        id,
        'cli',
        k === 0 ? null : CHAIN[k - 1],
        started,
        k < CHAIN.length - 1 ? started + 999 : null,
        k < CHAIN.length - 1 ? 'compression' : null,
      );
    });
    LONG.forEach((id, k) => {
      session.run(id, 'cli', k === 0 ? null : LONG[k - 1], t + k, null, null);
    });
    for (const id of CYCLE) session.run(id, 'cli', null, t, null, null);
    for (const id of OTHERS) session.run(id, pick(['cli', 'telegram']), null, t, null, null);
    // Close the loop: x ← z ← y ← x (a damaged or hand-edited file can hold one).
    db.prepare("UPDATE sessions SET parent_session_id = 'cyc-z' WHERE id = 'cyc-x'").run();
    db.prepare("UPDATE sessions SET parent_session_id = 'cyc-x' WHERE id = 'cyc-y'").run();
    db.prepare("UPDATE sessions SET parent_session_id = 'cyc-y' WHERE id = 'cyc-z'").run();

    // Messages in a shuffled order of sessions, so the chain's ids interleave with each other and with others'.
    const queue: string[] = [];
    CHAIN.forEach((id, k) => {
      queue.push(...Array(CHAIN_SIZES[k]).fill(id));
    });
    for (const id of LONG) queue.push(id, id);
    for (const id of CYCLE) queue.push(...Array(20).fill(id));
    for (const id of OTHERS) queue.push(...Array(10).fill(id));
    for (let i = queue.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [queue[i], queue[j]] = [queue[j]!, queue[i]!];
    }
    for (const id of queue) message.run(row(id));
  })();
  db.close();
}

// ── The oracle: Hermes' get_messages_as_conversation, as the spec states it ──

const S = `[${PY_WS}]`;
const MEMORY_BLOCK = new RegExp(`<${S}*memory-context${S}*>[^]*?</${S}*memory-context${S}*>`, 'giu');
const SYSTEM_NOTE = new RegExp(
  `\\[System note:${S}*The following is recalled memory context,${S}*NOT new user input\\.${S}*` +
    `Treat as (?:informational background data|authoritative reference data[^\\]]*)\\.\\]${S}*`,
  'giu',
);
const STRAY_TAG = new RegExp(`</?${S}*memory-context${S}*>`, 'giu');
const strip = (s: string) => s.replace(new RegExp(`^${S}+`, 'u'), '').replace(new RegExp(`${S}+$`, 'u'), '');
const truthy = (v: unknown) =>
  !(v === null || v === undefined || v === false || v === 0 || v === '') &&
  (Array.isArray(v) ? v.length > 0 : typeof v === 'object' ? Object.keys(v as object).length > 0 : true);
const parsed = (v: unknown) => (typeof v === 'string' ? JSON.parse(v) : null);

function oracle(db: Database.Database, sessionId: string, includeAncestors: boolean): Array<Record<string, unknown>> {
  const ids = [sessionId];
  if (includeAncestors) {
    const parentOf = db.prepare('SELECT parent_session_id FROM sessions WHERE id = ?').pluck();
    const seen = new Set(ids);
    let current = sessionId;
    for (let hop = 0; hop < 100; hop++) {
      const parent = parentOf.get(current) as string | null | undefined;
      if (!parent || seen.has(parent)) break;
      ids.unshift(parent);
      seen.add(parent);
      current = parent;
    }
  }
  const rows = db
    .prepare(
      `SELECT role, content, tool_call_id, tool_calls, tool_name, finish_reason, reasoning, reasoning_content,
       reasoning_details, codex_reasoning_items, codex_message_items
       FROM messages WHERE session_id IN (${ids.map(() => '?').join(', ')}) ORDER BY id`,
    )
    .all(...ids) as Array<Record<string, unknown>>;
  const out: Array<Record<string, unknown>> = [];
  for (const r of rows) {
    let c = r.content as unknown;
    if (typeof c === 'string' && c.startsWith('\u0000json:')) {
      try {
        c = JSON.parse(c.slice(6));
      } catch {}
    }
    if ((r.role === 'user' || r.role === 'assistant') && typeof c === 'string') {
      c = strip(c.replace(MEMORY_BLOCK, '').replace(SYSTEM_NOTE, '').replace(STRAY_TAG, ''));
    }
    const m: Record<string, unknown> = { role: r.role, content: c };
    if (r.tool_call_id) m.tool_call_id = r.tool_call_id;
    if (r.tool_name) m.tool_name = r.tool_name;
    if (truthy(parsed(r.tool_calls))) m.tool_calls = parsed(r.tool_calls);
    if (r.role === 'assistant') {
      if (r.finish_reason) m.finish_reason = r.finish_reason;
      if (r.reasoning) m.reasoning = r.reasoning;
      if (r.reasoning_content !== null) m.reasoning_content = r.reasoning_content;
      for (const k of ['reasoning_details', 'codex_reasoning_items', 'codex_message_items']) {
        if (truthy(parsed(r[k]))) m[k] = parsed(r[k]);
      }
    }
    if (includeAncestors && m.role === 'user' && typeof m.content === 'string' && m.content !== '') {
      let resent = false;
      for (let i = out.length - 1; i >= 0; i--) {
        const earlier = out[i]!;
        if (earlier.role === 'assistant' && (truthy(earlier.content) || truthy(earlier.tool_calls))) break;
        if (earlier.role === 'user' && earlier.content === m.content) {
          resent = true;
          break;
        }
      }
      if (resent) continue;
    }
    out.push(m);
  }
  return out;
}

const SESSIONS = [...CHAIN, 'long-119', 'long-50', ...CYCLE, 'other-0', 'other-999', 'no-such-session'];

writeFile();
const hermes = new Database(file, { readonly: true });
afterAll(() => hermes.close());

describe('the oracle and its data', () => {
  it('exercises what the rules are about', () => {
    const withAncestors = oracle(hermes, 'chain-4', true);
    const tip = oracle(hermes, 'chain-4', false);
    const all = hermes.prepare("SELECT COUNT(*) FROM messages WHERE session_id LIKE 'chain-%'").pluck().get();
    expect(all).toBe(1000);
    expect(tip.length).toBeGreaterThan(200);
    // Some resent prompts are dropped across the chain; structured content, tool calls and reasoning appear.
    expect(withAncestors.length).toBeLessThan(1000);
    expect(withAncestors.some((m) => Array.isArray(m.content))).toBe(true);
    expect(withAncestors.some((m) => m.tool_calls !== undefined)).toBe(true);
    expect(withAncestors.some((m) => m.reasoning_content === '')).toBe(true);
    expect(oracle(hermes, 'long-119', true).length).toBe(2 * 101);
  });
});

const harnesses: Array<[string, () => Harness | Promise<Harness>]> = [
  ['sqlite-file', sqliteFileHarness],
  ['pglite', () => pgliteHarness()],
  ['postgres', () => postgresHarness()],
];

describe.each(harnesses)('getMessagesAsConversation equals Hermes on an imported file: %s', (_, make) => {
  let harness: Harness;
  let store: SessionStore | undefined;
  beforeAll(async () => {
    harness = await make();
    if (!reportAvailability(harness)) return;
    store = await harness.open();
    await importHermesStateDb(file, store);
  }, 300_000);
  afterAll(async () => {
    await store?.close();
    await harness?.cleanup();
  });

  it.each(SESSIONS)('%s', async (id) => {
    if (!store) return;
    for (const includeAncestors of [true, false]) {
      expect(
        await store.getMessagesAsConversation(id, { includeAncestors }),
        `${id} ${includeAncestors}`,
      ).toStrictEqual(oracle(hermes, id, includeAncestors));
    }
  });
});

describe('getMessagesAsConversation equals Hermes on the Hermes file itself (SQLite)', () => {
  let store: SessionStore;
  beforeAll(async () => {
    const copy = path.join(dir, 'copy.db');
    fs.copyFileSync(file, copy);
    store = await openStore(`sqlite:${copy}`, { migrate: false });
  });
  afterAll(async () => store?.close());

  it.each(SESSIONS)('%s', async (id) => {
    for (const includeAncestors of [true, false]) {
      expect(
        await store.getMessagesAsConversation(id, { includeAncestors }),
        `${id} ${includeAncestors}`,
      ).toStrictEqual(oracle(hermes, id, includeAncestors));
    }
  });
});
