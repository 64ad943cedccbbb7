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
const HERMES_FTS_DDL = fs
  .readFileSync(new URL('../drizzle/sqlite/0002_fts5_search.sql', import.meta.url), 'utf8')
  .split('--> statement-breakpoint');

/** An empty Hermes v11 state.db at `file` (replaced if present): Hermes' DDL, FTS tables and triggers. */
export function createHermesStateDb(file: string): Database.Database {
  fs.rmSync(file, { force: true });
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.exec(HERMES_V11_DDL);
  for (const statement of HERMES_FTS_DDL) db.exec(statement);
  db.prepare('INSERT INTO schema_version (version) VALUES (11)').run();
  return db;
}

export function writeHermesStateDb(file: string): void {
  const db = createHermesStateDb(file);

  const t0 = 1_793_000_000.123456; // 2026-10-27, microseconds as time.time() gives them
  const session =
    db.prepare(`INSERT INTO sessions (id, source, user_id, model, model_config, system_prompt, parent_session_id, started_at,
    ended_at, end_reason, message_count, tool_call_count, input_tokens, output_tokens, estimated_cost_usd, cost_status, title, api_call_count)
    VALUES (@id, @source, @user, @model, @config, @prompt, @parent, @started, @ended, @reason, @messages, @tools, @input, @output, @cost, 'estimated', @title, @calls)`);
  const message =
    db.prepare(`INSERT INTO messages (session_id, role, content, tool_call_id, tool_calls, tool_name, timestamp, finish_reason, reasoning)
    VALUES (@session, @role, @content, @callId, @calls, @tool, @at, @finish, @reasoning)`);
  const base = {
    user: '42',
    model: 'anthropic/claude-sonnet-4.5',
    config: json({ temperature: 0.2, max_tokens: 8192 }),
    prompt: 'You are Hermes.',
    parent: null,
    ended: null,
    reason: null,
    tools: 0,
    input: 0,
    output: 0,
    cost: null,
    title: null,
    calls: 0,
  };
  const msg = { callId: null, calls: null, tool: null, finish: null, reasoning: null };

  db.transaction(() => {
    session.run({
      ...base,
      id: '20261027_091500_a1b2c3',
      source: 'telegram',
      started: t0,
      ended: t0 + 900,
      reason: 'compression',
      messages: 4,
      tools: 1,
      input: 18_400,
      output: 2_150,
      cost: 0.0873,
      title: 'Docker deploy',
      calls: 3,
    });
    message.run({
      ...msg,
      session: '20261027_091500_a1b2c3',
      role: 'user',
      content: 'How do I deploy the web app with Docker on the new server?',
      at: t0 + 1,
    });
    message.run({
      ...msg,
      session: '20261027_091500_a1b2c3',
      role: 'assistant',
      content: null,
      at: t0 + 5,
      reasoning: 'Check what is running first.',
      calls: json([
        {
          id: 'call_1',
          type: 'function',
          function: { name: 'terminal', arguments: json({ command: 'docker ps --format {{.Names}}' }) },
        },
      ]),
    });
    message.run({
      ...msg,
      session: '20261027_091500_a1b2c3',
      role: 'tool',
      content: 'web-1\nnginx-proxy\npostgres-15',
      callId: 'call_1',
      tool: 'terminal',
      at: t0 + 6,
    });
    message.run({
      ...msg,
      session: '20261027_091500_a1b2c3',
      role: 'assistant',
      content: 'Build the image, then run it behind nginx-proxy with docker compose up -d.',
      at: t0 + 9,
      finish: 'stop',
    });

    session.run({
      ...base,
      id: '20261027_093000_d4e5f6',
      source: 'telegram',
      parent: '20261027_091500_a1b2c3',
      started: t0 + 901,
      messages: 2,
      input: 3_100,
      output: 420,
      cost: 0.0121,
      title: 'Docker deploy #2',
      calls: 1,
    });
    message.run({
      ...msg,
      session: '20261027_093000_d4e5f6',
      role: 'user',
      at: t0 + 960,
      content: `\u0000json:${json([
        { type: 'text', text: 'Here is the compose error' },
        { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
      ])}`,
    });
    message.run({
      ...msg,
      session: '20261027_093000_d4e5f6',
      role: 'assistant',
      content: 'The healthcheck port is wrong: expose 8080, not 80.',
      at: t0 + 975,
      finish: 'stop',
    });

    session.run({
      ...base,
      id: '20261027_093200_sub001',
      source: 'subagent',
      parent: '20261027_093000_d4e5f6',
      started: t0 + 1000,
      ended: t0 + 1040,
      reason: 'completed',
      messages: 2,
      input: 900,
      output: 150,
      cost: 0.0031,
      calls: 1,
    });
    message.run({
      ...msg,
      session: '20261027_093200_sub001',
      role: 'user',
      content: 'Check the nginx logs for 502 errors since 09:00.',
      at: t0 + 1001,
    });
    message.run({
      ...msg,
      session: '20261027_093200_sub001',
      role: 'assistant',
      content: 'Twelve 502 errors, all from the old healthcheck on port 80.',
      at: t0 + 1039,
    });

    session.run({
      ...base,
      id: '20261026_200000_zh0001',
      source: 'cli',
      model: 'qwen/qwen3-max',
      started: t0 - 47_000,
      ended: t0 - 46_000,
      reason: 'user_exit',
      messages: 2,
      input: 1_200,
      output: 300,
      cost: 0.0009,
      title: '记忆断裂排查',
      calls: 1,
    });
    message.run({
      ...msg,
      session: '20261026_200000_zh0001',
      role: 'user',
      content: '为什么会出现记忆断裂？上下文压缩之后丢了前面的对话。',
      at: t0 - 46_990,
    });
    message.run({
      ...msg,
      session: '20261026_200000_zh0001',
      role: 'assistant',
      content: '压缩后会开启新的会话，通过 parent_session_id 连接原会话，所以搜索时要沿着谱系查找。',
      at: t0 - 46_950,
    });

    db.prepare(`INSERT INTO telegram_dm_topic_mode (chat_id, user_id, enabled, activated_at, updated_at, has_topics_enabled)
                VALUES ('100200300', '42', 1, ?, ?, 1)`).run(t0, t0);
    db.prepare(`INSERT INTO telegram_dm_topic_bindings (chat_id, thread_id, user_id, session_key, session_id, managed_mode, linked_at, updated_at)
                VALUES ('100200300', '17', '42', 'agent:main:telegram:dm:100200300:17', '20261027_093000_d4e5f6', 'auto', ?, ?)`).run(
      t0 + 901,
      t0 + 901,
    );
    db.prepare("INSERT INTO state_meta (key, value) VALUES ('telegram_dm_topic_schema_version', '2')").run();
  })();
  db.close();
}

/** A small deterministic PRNG (mulberry32), so a history is the same file on every machine. */
export function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// The most frequent English words, most frequent first: real queries are full of them ("say in in").
const COMMON = (
  'the be to of and a in that have I it for not on with he as you do at this but his by from they we say her she or an will my one ' +
  'all would there their what so up out if about who get which go me when make can like time no just him know take people into year ' +
  'your good some could them see other than then now look only come its over think also back after use two how our work first well way ' +
  'even new want because any these give day most us is was are been has had were said did'
).split(' ');
const TECH = (
  'docker compose deploy server postgres backup kubernetes ingress timeout network config python rust build test release memory cache ' +
  'query index search token session agent model prompt retry lock write read file path user error log request response api cluster node ' +
  'container image volume port proxy nginx database table schema migration commit branch merge review install package version update'
).split(' ');
/** Dotted, hyphenated and underscored terms the generated histories hold (the sanitizer quotes them). */
export const COMPOUNDS = [
  'chat-send',
  'p2.2',
  'sp_new',
  'simulate.p2.test.ts',
  'my-app.config',
  'v1.2.3',
  'snake_case_thing',
  'docker-compose',
  '2024-01-01',
  'node_modules',
];
const ACCENTED = ['café', 'naïve', 'Übersicht', 'résumé', 'straße', 'crème'];
const HAN =
  '的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说产种面而方后多定行学法所民得经十三之进着等部度家电力里如水化高自二理起小物现实加量都两体制机当使点从业本去把性好应开它合还因由其些然前外天政四日那社义事平形相全表间样与关各重新线内数正心反你明看原又么利比或但质气第向道命此变条只没结解问意建月公无系军很情者最立代想已通并提直题党程展五果料象员革位入常文总次品式活设及管特件长求老头基资边流路级少图山统接知较将组见计别她手角期根论运农指几九区强放决西被干做必战先回则任取据处队南给色光门即保治北造百规热领七海口东导器压志世金增争济阶油思术极交受联什认六共权收证改清己美再采转更单风切打白教速花带安场身车例真务具万每目至达走积示议声报斗完类八离华名确才科张信马节话米整空元况今集温传土许步群广石记需段研界拉林律叫且究观越织装影算低持音众书布复容儿须际商非验连断深难近矿千周委素技备半办青省列习响约支般史感劳便团往酸历市克何除消构府称太准精值号率族维划选标写存候毛亲快效斯院查江型眼王按格养易置派层片始却专状育厂京识适属圆包火住调满县局照参红细引听该铁价严';
const KANA =
  'あいうえおかきくけこさしすせそたちつてとなにぬねのはひふへほまみむめもやゆよらりるれろわをんアイウエオカキクケコサシスセソタチツテト';
const HANGUL = ['안녕하세요', '반갑습니다', '데이터', '검색', '서버', '배포', '오류', '메모리'];

/** Pseudo-words for the long tail: each is rare, and together they make the vocabulary of a real history. */
function tailWords(count: number, random: () => number): string[] {
  const onsets = [
    'b',
    'br',
    'c',
    'ch',
    'd',
    'dr',
    'f',
    'g',
    'gl',
    'h',
    'k',
    'l',
    'm',
    'n',
    'p',
    'pl',
    'qu',
    'r',
    's',
    'sh',
    'st',
    't',
    'tr',
    'v',
    'w',
    'z',
  ];
  const vowels = ['a', 'e', 'i', 'o', 'u', 'ai', 'ea', 'io', 'ou'];
  const seen = new Set<string>();
  while (seen.size < count) {
    let w = '';
    const syllables = 2 + Math.floor(random() * 3);
    for (let i = 0; i < syllables; i++)
      w += onsets[Math.floor(random() * onsets.length)]! + vowels[Math.floor(random() * vowels.length)]!;
    if (random() < 0.3) w += ['n', 'r', 's', 'x', 'l', 'th'][Math.floor(random() * 6)]!;
    seen.add(w);
  }
  return [...seen];
}

/** Draw from a Zipf distribution over `items` (rank r has weight 1 / (r + offset)). */
function zipf<T>(items: readonly T[], random: () => number, offset = 2): () => T {
  const cumulative: number[] = [];
  let total = 0;
  for (let r = 0; r < items.length; r++) {
    total += 1 / (r + offset);
    cumulative.push(total);
  }
  return () => {
    const x = random() * total;
    let lo = 0;
    let hi = cumulative.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cumulative[mid]! < x) lo = mid + 1;
      else hi = mid;
    }
    return items[lo]!;
  };
}

export interface HermesHistoryOptions {
  /** Number of messages (sessions are cut every 5–60 messages). */
  messages: number;
  seed?: number;
  /** Share of messages written in the same second as the previous one (equal timestamps test tie order). */
  equalTimestamps?: number;
  /** Messages per session: min + [0, span) (default 5 + [0, 56)); a min of 0 writes sessions without messages. */
  sessionSize?: { min: number; span: number };
  /**
   * Lineage as Hermes writes it, for the listing: compression continuations (the parent ends with 'compression'
   * when the child starts, chains of several), /branch children, delegated children, continuations that started
   * before their parent ended (not a chain), sessions starting in the same second, and old sessions resumed
   * later (so activity order differs from start order). Off by default: the file stays byte-for-byte the same.
   */
  lineage?: boolean;
}

/**
 * Writes a large Hermes-format state.db (v11 DDL, Hermes' FTS triggers, json.dumps JSON, REAL epoch
 * seconds) that reads like a real history: Zipf-distributed English with a long tail of rare words,
 * sentences and colons (snippets start at sentence starts), tool output with paths and compounds
 * (chat-send, p2.2), tool calls, Chinese, Japanese and Korean text, accented words, a little structured
 * content, messages of very different lengths, and some equal timestamps.
 */
export function writeHermesHistoryStateDb(file: string, options: HermesHistoryOptions): void {
  const random = prng(options.seed ?? 20261123);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(random() * xs.length)]!;
  const english = zipf([...COMMON, ...TECH, ...tailWords(30_000, random)], random, 3);
  const han = zipf([...HAN], random, 8);
  const word = () => {
    const x = random();
    if (x < 0.004) return pick(ACCENTED);
    if (x < 0.012) return pick(COMPOUNDS);
    return english();
  };
  const sentence = (min: number, max: number) => {
    const n = min + Math.floor(random() * (max - min + 1));
    const words = Array.from({ length: n }, word);
    words[0] = words[0]!.charAt(0).toUpperCase() + words[0]!.slice(1);
    return `${words.join(' ')}${pick(['.', '.', '.', '?', ':', '!'])}`;
  };
  const chinese = (n: number) => Array.from({ length: n }, () => han()).join('');

  const db = createHermesStateDb(file);
  db.pragma('synchronous = OFF');
  const insertSession =
    db.prepare(`INSERT INTO sessions (id, source, user_id, model, parent_session_id, started_at, ended_at, end_reason, message_count, title)
    VALUES (?, ?, '42', ?, ?, ?, ?, ?, ?, ?)`);
  const insertMessage =
    db.prepare(`INSERT INTO messages (session_id, role, content, tool_call_id, tool_calls, tool_name, timestamp, finish_reason)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?)`);

  const sources = ['cli', 'telegram', 'discord', 'tool', 'cron', 'slack'];
  const models = ['anthropic/claude-sonnet-4.5', 'openai/gpt-5', 'qwen/qwen3-max'];
  let t = 1_760_000_000.25;
  let written = 0;
  let sessionNo = 0;
  let previous: string | null = null;
  let previousStarted = t;
  const lineageRandom = prng((options.seed ?? 20261123) + 1);
  const ids: string[] = [];
  const endSession = db.prepare('UPDATE sessions SET ended_at = ?, end_reason = ? WHERE id = ?');
  const write = db.transaction((count: number) => {
    while (written < count) {
      const id = `2026${String(100000 + sessionNo).slice(1)}_${Math.floor(random() * 0xffffff)
        .toString(16)
        .padStart(6, '0')}`;
      const size = Math.min(
        count - written,
        (options.sessionSize?.min ?? 5) + Math.floor(random() * (options.sessionSize?.span ?? 56)),
      );
      let started = t;
      const kind = options.lineage ? lineageRandom() : 1;
      if (previous !== null && kind >= 0.32 && kind < 0.35) started = previousStarted;
      const rows: Array<[string, string | null, string | null, string | null, string | null, number, string | null]> =
        [];
      for (let i = 0; i < size; i++) {
        if (random() >= (options.equalTimestamps ?? 0.01))
          t += 1 + Math.floor(random() * 600) + Math.floor(random() * 1e6) / 1e6;
        const kind = random();
        if (kind < 0.3) rows.push(['user', sentence(4, 24), null, null, null, t, null]);
        else if (kind < 0.62) {
          const text = Array.from({ length: 1 + Math.floor(random() * 8) }, () => sentence(5, 22)).join(
            random() < 0.2 ? '\n\n' : ' ',
          );
          rows.push(['assistant', text, null, null, null, t, 'stop']);
        } else if (kind < 0.72) {
          const tool = pick(['terminal', 'web_search', 'read_file']);
          const call = `call_${sessionNo}_${i}`;
          const args = json({ query: `${word()} ${word()} ${word()}`, path: `src/${word()}/${word()}.ts` });
          rows.push([
            'assistant',
            random() < 0.5 ? null : sentence(3, 10),
            null,
            json([{ id: call, type: 'function', function: { name: tool, arguments: args } }]),
            null,
            t,
            'tool_calls',
          ]);
          const lines = Array.from(
            { length: 1 + Math.floor(random() * 12) },
            () => `${word()}/${word()}.py:${Math.floor(random() * 900)}: ${sentence(3, 9)}`,
          );
          rows.push(['tool', lines.join('\n'), call, null, tool, t + 0.5, null]);
        } else if (kind < 0.86)
          rows.push([
            pick(['user', 'assistant']),
            `${chinese(4 + Math.floor(random() * 30))}${random() < 0.5 ? `，${chinese(3 + Math.floor(random() * 12))}。` : ''}`,
            null,
            null,
            null,
            t,
            null,
          ]);
        else if (kind < 0.9)
          rows.push([
            pick(['user', 'assistant']),
            Array.from({ length: 3 + Math.floor(random() * 8) }, () => pick([...KANA])).join('') +
              pick(['です。', 'ます。', '']),
            null,
            null,
            null,
            t,
            null,
          ]);
        else if (kind < 0.93)
          rows.push([
            pick(['user', 'assistant']),
            Array.from({ length: 2 + Math.floor(random() * 4) }, () => pick(HANGUL)).join(' '),
            null,
            null,
            null,
            t,
            null,
          ]);
        else if (kind < 0.935)
          rows.push([
            'user',
            `\u0000json:${json([
              { type: 'text', text: sentence(3, 12) },
              { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
            ])}`,
            null,
            null,
            null,
            t,
            null,
          ]);
        else if (kind < 0.94)
          rows.push([
            'tool',
            Array.from({ length: 200 + Math.floor(random() * 800) }, word).join(' '),
            null,
            null,
            'read_file',
            t,
            null,
          ]);
        else
          rows.push([
            'assistant',
            Array.from({ length: 10 + Math.floor(random() * 40) }, () => sentence(4, 18)).join(' '),
            null,
            null,
            null,
            t,
            'stop',
          ]);
      }
      const source = pick(sources);
      let parent = previous !== null && random() < 0.1 ? previous : null;
      if (options.lineage && previous !== null) {
        parent = kind < 0.32 ? previous : null;
        // A continuation or a branch: the parent ends as the child starts (or, the last case, 5 s after).
        if (kind < 0.15) endSession.run(started, 'compression', previous);
        else if (kind < 0.22) endSession.run(started, 'branched', previous);
        else if (kind >= 0.3 && kind < 0.32) endSession.run(started + 5, 'compression', previous);
      }
      insertSession.run(
        id,
        source,
        pick(models),
        parent,
        started,
        t + 1,
        'user_exit',
        rows.length,
        random() < 0.3 ? `${english()} ${english()} #${sessionNo}` : null,
      );
      for (const [role, content, callId, calls, tool, at, finish] of rows)
        insertMessage.run(id, role, content, callId, calls, tool, at, finish);
      written += rows.length;
      previous = id;
      previousStarted = started;
      sessionNo++;
      if (options.lineage) {
        ids.push(id);
        // Now and then an old session is picked up again: a message or two, now.
        if (lineageRandom() < 0.03) {
          const old = ids[Math.floor(lineageRandom() * ids.length)]!;
          for (let k = 0; k < 1 + Math.floor(lineageRandom() * 2) && written < count; k++) {
            t += 1 + Math.floor(lineageRandom() * 60);
            insertMessage.run(old, 'user', `picking this up again ${sessionNo}`, null, null, null, t, null);
            written++;
          }
        }
      }
    }
  });
  for (let target = 0; written < options.messages; ) {
    target = Math.min(options.messages, target + 20_000);
    write(target);
  }
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
}
