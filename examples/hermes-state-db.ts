/**
 * Writes a small Hermes-format state.db (schema v11) the way the Python reference does: Hermes' own DDL
 * and FTS5 triggers, JSON as `json.dumps` text, structured content as "\x00json:" + JSON, epoch-second
 * REAL times. It holds a compression chain, a delegated subagent, tool calls, Chinese text and a
 * Telegram topic binding, so the demo has something real to import, search and follow.
 */
import fs from 'node:fs';
import Database from 'better-sqlite3';
import { pythonJsonDumps as json } from '../src/codecs/python-json.js'; // json.dumps, byte for byte

const HERMES_V11_DDL = fs.readFileSync(new URL('../test/fixtures/hermes-v11-schema.sql', import.meta.url), 'utf8');
// Hermes' FTS_SQL + FTS_TRIGRAM_SQL, which our SQLite migration carries verbatim.
const HERMES_FTS_DDL = fs.readFileSync(new URL('../drizzle/sqlite/0002_fts5_search.sql', import.meta.url), 'utf8').split('--> statement-breakpoint');


export function writeHermesStateDb(file: string): void {
  fs.rmSync(file, { force: true });
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.exec(HERMES_V11_DDL);
  for (const statement of HERMES_FTS_DDL) db.exec(statement);
  db.prepare('INSERT INTO schema_version (version) VALUES (11)').run();

  const t0 = 1_793_000_000.123456; // 2026-10-27, microseconds as time.time() gives them
  const session = db.prepare(`INSERT INTO sessions (id, source, user_id, model, model_config, system_prompt, parent_session_id, started_at,
    ended_at, end_reason, message_count, tool_call_count, input_tokens, output_tokens, estimated_cost_usd, cost_status, title, api_call_count)
    VALUES (@id, @source, @user, @model, @config, @prompt, @parent, @started, @ended, @reason, @messages, @tools, @input, @output, @cost, 'estimated', @title, @calls)`);
  const message = db.prepare(`INSERT INTO messages (session_id, role, content, tool_call_id, tool_calls, tool_name, timestamp, finish_reason, reasoning)
    VALUES (@session, @role, @content, @callId, @calls, @tool, @at, @finish, @reasoning)`);
  const base = { user: '42', model: 'anthropic/claude-sonnet-4.5', config: json({ temperature: 0.2, max_tokens: 8192 }), prompt: 'You are Hermes.',
    parent: null, ended: null, reason: null, tools: 0, input: 0, output: 0, cost: null, title: null, calls: 0 };
  const msg = { callId: null, calls: null, tool: null, finish: null, reasoning: null };

  db.transaction(() => {
    session.run({ ...base, id: '20261027_091500_a1b2c3', source: 'telegram', started: t0, ended: t0 + 900, reason: 'compression', messages: 4,
      tools: 1, input: 18_400, output: 2_150, cost: 0.0873, title: 'Docker deploy', calls: 3 });
    message.run({ ...msg, session: '20261027_091500_a1b2c3', role: 'user', content: 'How do I deploy the web app with Docker on the new server?', at: t0 + 1 });
    message.run({ ...msg, session: '20261027_091500_a1b2c3', role: 'assistant', content: null, at: t0 + 5, reasoning: 'Check what is running first.',
      calls: json([{ id: 'call_1', type: 'function', function: { name: 'terminal', arguments: json({ command: 'docker ps --format {{.Names}}' }) } }]) });
    message.run({ ...msg, session: '20261027_091500_a1b2c3', role: 'tool', content: 'web-1\nnginx-proxy\npostgres-15', callId: 'call_1', tool: 'terminal', at: t0 + 6 });
    message.run({ ...msg, session: '20261027_091500_a1b2c3', role: 'assistant', content: 'Build the image, then run it behind nginx-proxy with docker compose up -d.', at: t0 + 9, finish: 'stop' });

    session.run({ ...base, id: '20261027_093000_d4e5f6', source: 'telegram', parent: '20261027_091500_a1b2c3', started: t0 + 901, messages: 2,
      input: 3_100, output: 420, cost: 0.0121, title: 'Docker deploy #2', calls: 1 });
    message.run({ ...msg, session: '20261027_093000_d4e5f6', role: 'user', at: t0 + 960,
      content: `\u0000json:${json([{ type: 'text', text: 'Here is the compose error' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } }])}` });
    message.run({ ...msg, session: '20261027_093000_d4e5f6', role: 'assistant', content: 'The healthcheck port is wrong: expose 8080, not 80.', at: t0 + 975, finish: 'stop' });

    session.run({ ...base, id: '20261027_093200_sub001', source: 'subagent', parent: '20261027_093000_d4e5f6', started: t0 + 1000, ended: t0 + 1040,
      reason: 'completed', messages: 2, input: 900, output: 150, cost: 0.0031, calls: 1 });
    message.run({ ...msg, session: '20261027_093200_sub001', role: 'user', content: 'Check the nginx logs for 502 errors since 09:00.', at: t0 + 1001 });
    message.run({ ...msg, session: '20261027_093200_sub001', role: 'assistant', content: 'Twelve 502 errors, all from the old healthcheck on port 80.', at: t0 + 1039 });

    session.run({ ...base, id: '20261026_200000_zh0001', source: 'cli', model: 'qwen/qwen3-max', started: t0 - 47_000, ended: t0 - 46_000,
      reason: 'user_exit', messages: 2, input: 1_200, output: 300, cost: 0.0009, title: '记忆断裂排查', calls: 1 });
    message.run({ ...msg, session: '20261026_200000_zh0001', role: 'user', content: '为什么会出现记忆断裂？上下文压缩之后丢了前面的对话。', at: t0 - 46_990 });
    message.run({ ...msg, session: '20261026_200000_zh0001', role: 'assistant', content: '压缩后会开启新的会话，通过 parent_session_id 连接原会话，所以搜索时要沿着谱系查找。', at: t0 - 46_950 });

    db.prepare(`INSERT INTO telegram_dm_topic_mode (chat_id, user_id, enabled, activated_at, updated_at, has_topics_enabled)
                VALUES ('100200300', '42', 1, ?, ?, 1)`).run(t0, t0);
    db.prepare(`INSERT INTO telegram_dm_topic_bindings (chat_id, thread_id, user_id, session_key, session_id, managed_mode, linked_at, updated_at)
                VALUES ('100200300', '17', '42', 'agent:main:telegram:dm:100200300:17', '20261027_093000_d4e5f6', 'auto', ?, ?)`).run(t0 + 901, t0 + 901);
    db.prepare("INSERT INTO state_meta (key, value) VALUES ('telegram_dm_topic_schema_version', '2')").run();
  })();
  db.close();
}
