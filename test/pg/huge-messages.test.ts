/**
 * Messages too big for a tsvector, on PGlite and the real server: any message SQLite accepts, Postgres
 * accepts and returns whole. Migration 0004 builds the word vector from at most 100,001 characters of the
 * searchable text (a tsvector holds at most 1 MB); these tests store 1 MB messages of the worst shapes, prove
 * the migration rewrites a populated table without changing a stored value or a search result, and copy a
 * SQLite store holding such messages into Postgres with `copy`'s own verification.
 */
import fs from 'node:fs';
import { sql } from 'drizzle-orm';
import { afterAll, describe, expect, it } from 'vitest';
import {
  type PgBackend,
  type SearchSort,
  type SessionStore,
  copyStore,
  openStore,
  planSearch,
  verifyStores,
} from '../../src/index.js';
import type { QueryNode } from '../../src/search/query.js';
import { containsPattern } from '../../src/sql/like.js';
import { rowsOf } from '../../src/db/pg/open.js';
import { type Harness, pgliteHarness, postgresHarness, reportAvailability, sqliteFileHarness } from '../backends.js';
import { rng } from '../helpers/corpus.js';
import { pgFolderUpTo, readJournal } from '../helpers/migration-folders.js';

const lexemeText = (token: string) => `'${token.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;

/** The tsquery text for a parsed query, to read migration 0004's word vector directly (cast with ::tsquery, so no parser re-cuts the words). */
function tsqueryText(node: QueryNode): string {
  switch (node.kind) {
    case 'phrase': {
      const parts = node.tokens.map(
        (t, i) => `${lexemeText(t)}${node.prefix && i === node.tokens.length - 1 ? ':*' : ''}`,
      );
      return parts.length === 1 ? parts[0]! : `(${parts.join(' <-> ')})`;
    }
    case 'and':
      return `(${node.children.map(tsqueryText).join(' & ')})`;
    case 'or':
      return `(${node.children.map(tsqueryText).join(' | ')})`;
    case 'not':
      return `(${tsqueryText(node.left)} & !${tsqueryText(node.right)})`;
  }
}

const MiB = 1024 * 1024;
/** Migration 0004 builds the word vector from a message's first 90,000 and last 10,000 characters. */
const WORD_HEAD = 90_000;
const WORD_TAIL = 10_000;

/** `git rev-list` output: 25,000 random 40-hex lines (1,024,999 bytes). */
function revList(seed: number): string[] {
  const r = rng(seed);
  return Array.from({ length: 25_000 }, () =>
    Array.from({ length: 40 }, () => '0123456789abcdef'[Math.floor(r() * 16)]).join(''),
  );
}

/**
 * 1 MiB of distinct short CJK tokens: two-character tokens, alternately from the BMP block (3 UTF-8 bytes a
 * character) and extension B (4 bytes), the shapes that make the biggest tsvector per character.
 */
function cjkTokens(): string[] {
  const tokens: string[] = [];
  let bytes = 0;
  for (let i = 0; bytes <= MiB; i++) {
    const n = Math.floor(i / 2);
    const token =
      i % 2 === 0
        ? String.fromCodePoint(0x4e00 + (n % 20_992), 0x4e00 + Math.floor(n / 20_992))
        : String.fromCodePoint(0x20000 + (n % 42_000), 0x20000 + Math.floor(n / 42_000));
    tokens.push(token);
    bytes += Buffer.byteLength(token) + 1;
  }
  return tokens;
}

/** 1 MiB of random English-ish words (syllables), with some punctuation and line breaks. */
function englishText(seed: number): string {
  const r = rng(seed);
  const onsets = [
    'b',
    'br',
    'c',
    'ch',
    'd',
    'f',
    'g',
    'gr',
    'h',
    'k',
    'l',
    'm',
    'n',
    'p',
    'pl',
    'r',
    's',
    'st',
    't',
    'tr',
    'v',
    'w',
  ];
  const vowels = ['a', 'e', 'i', 'o', 'u', 'ea', 'ou', 'ai'];
  const codas = ['', '', 'n', 'r', 's', 't', 'nd', 'ng', 'ck', 'st'];
  const pick = (list: string[]) => list[Math.floor(r() * list.length)]!;
  const parts: string[] = [];
  let length = 0;
  while (length < MiB) {
    let word = '';
    for (let s = 1 + Math.floor(r() * 3); s > 0; s--) word += pick(onsets) + pick(vowels) + pick(codas);
    const roll = r();
    const piece = roll < 0.05 ? `${word}.\n` : roll < 0.1 ? `${word}, ` : `${word} `;
    parts.push(piece);
    length += piece.length;
  }
  return parts.join('');
}

/**
 * Postgres' text-search parser reads "<digits>e<digits>…" as a number in scientific notation and splits the
 * rest off, so such a hash is not one word on Postgres (a separate, known difference from SQLite); the word
 * tests pick a hash that does not start that way.
 */
const splitByPgParser = (hash: string) => /^[0-9]+e[0-9]/.test(hash);

/** JSON with object keys sorted. */
const canonical = (value: unknown): string =>
  JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([x], [y]) => (x < y ? -1 : 1)))
      : v,
  );

const rowsOfStore = async <T>(store: SessionStore, query: ReturnType<typeof sql>) =>
  rowsOf<T>(await (store.backend as PgBackend).db.execute(query));

const ids = async (store: SessionStore, query: string, sort?: SearchSort) =>
  (await store.searchMessages(query, { limit: -1, ...(sort ? { sort } : {}) })).map((h) => h.id).sort((a, b) => a - b);

/**
 * The ids a query matches, asked without ranking or the indexes 0004 adds: short CJK and a substring as plain
 * scans; word queries straight from 0002's vector on a store at 0003 (`words: 'vector'`), else by the store's
 * search (0011 dropped the vector).
 */
const matchingIds = async (
  store: SessionStore,
  query: string,
  sort?: SearchSort,
  words: 'vector' | 'store' = 'store',
) => {
  const plan = planSearch(query);
  if (plan.path === 'like') {
    // Hermes' short-CJK path as a plain scan (no gram index, which only 0004 adds).
    const clauses = plan.tokens.map((t) => {
      const p = containsPattern(t);
      return sql`(content ILIKE ${p} OR content_json::text ILIKE ${p} OR tool_name ILIKE ${p} OR tool_calls::text ILIKE ${p})`;
    });
    const found = await rowsOfStore<{ id: number }>(
      store,
      sql`SELECT id::int AS id FROM messages WHERE ${sql.join(clauses, sql` OR `)} ORDER BY id`,
    );
    return found.map((r) => r.id);
  }
  if (plan.path === 'substrings' && plan.match.kind === 'phrase') {
    // One substring, as Hermes' trigram table finds it: case-insensitive, anywhere in the searchable text.
    const found = await rowsOfStore<{ id: number }>(
      store,
      sql`SELECT id::int AS id FROM messages
        WHERE message_search_text(content, content_json, tool_name, tool_calls) ILIKE ${containsPattern(plan.match.text)} ORDER BY id`,
    );
    return found.map((r) => r.id);
  }
  if (plan.path !== 'words' || words === 'store') return ids(store, query, sort);
  const found = await rowsOfStore<{ id: number }>(
    store,
    sql`SELECT id::int AS id FROM messages WHERE search_vector @@ CAST(${tsqueryText(plan.match)}::text AS tsquery) ORDER BY id`,
  );
  return found.map((r) => r.id);
};

const harnesses: Harness[] = [pgliteHarness(), await postgresHarness()];
const tmpDirs: string[] = [];
const sqlite = sqliteFileHarness();
afterAll(async () => {
  await sqlite.cleanup();
  for (const d of tmpDirs) fs.rmSync(d, { recursive: true, force: true });
});

for (const h of harnesses) {
  const available = reportAvailability(h);
  describe.skipIf(!available)(`huge messages [${h.name}]${available ? '' : ` (skipped: ${h.unavailable})`}`, () => {
    afterAll(() => h.cleanup());

    it('stores a 1 MB git rev-list tool result whole and finds a hash from its start', async () => {
      const store = await h.open();
      try {
        await store.createSession('s', 'cli');
        const lines = revList(1);
        const content = lines.join('\n');
        expect(content.length).toBe(1_024_999);
        const call = [
          {
            id: 'call_1',
            type: 'function',
            function: { name: 'terminal', arguments: '{"command": "git rev-list --all"}' },
          },
        ];
        await store.appendMessage('s', 'assistant', null, { toolCalls: call });
        const id = await store.appendMessage('s', 'tool', content, { toolCallId: 'call_1', toolName: 'terminal' });

        const [stored] = (await store.getMessages('s')).filter((m) => m.id === id);
        expect(stored!.content === content).toBe(true); // byte for byte, without printing 1 MB on failure
        const hash = lines.slice(0, 24).find((l) => !splitByPgParser(l))!; // 24 lines = the first 1,000 characters
        expect(await ids(store, hash)).toEqual([id]);
        // The tool name (appended after the content) and the last lines are found ...
        expect(await ids(store, 'terminal')).toEqual([id - 1, id]);
        const last = lines.slice(-20).find((l) => !splitByPgParser(l))!;
        expect(content.length - content.indexOf(last)).toBeLessThan(WORD_TAIL);
        expect(await ids(store, last)).toEqual([id]);
        // ... and so is a hash from the middle: the block index (migration 0010) holds every word of the text,
        // as FTS5 does, where 0004's word vector kept a window of its head and tail.
        const middle = lines.slice(12_000).find((l) => !splitByPgParser(l))!;
        expect(content.indexOf(middle)).toBeGreaterThan(WORD_HEAD);
        expect(await ids(store, middle)).toEqual([id]);
      } finally {
        await store.close();
      }
    }, 180_000);

    it('stores 1 MB of distinct short CJK tokens whole and finds tokens from its start and its end', async () => {
      const store = await h.open();
      try {
        await store.createSession('s', 'cli');
        const tokens = cjkTokens();
        const content = `${tokens.join(' ')} 记忆断裂连接`;
        expect(Buffer.byteLength(content)).toBeGreaterThanOrEqual(MiB);
        const id = await store.appendMessage('s', 'tool', content, { toolName: 'read_file' });

        const [stored] = await store.getMessages('s');
        expect(stored!.id).toBe(id);
        expect(stored!.content === content).toBe(true);
        expect(await ids(store, tokens[7]!)).toEqual([id]); // BMP, inside the first 1,000 characters
        expect(await ids(store, tokens[8]!)).toEqual([id]); // extension B
        // Short CJK is a substring search over the whole text, so the end is found too.
        expect(await ids(store, tokens.at(-1)!)).toEqual([id]);
        // 3+ character CJK is found through the trigram index, which holds the whole 1 MB.
        expect(await ids(store, '断裂连接')).toEqual([id]);
      } finally {
        await store.close();
      }
    }, 180_000);

    it('stores 1 MB of random English-ish words whole and finds a word from its start', async () => {
      const store = await h.open();
      try {
        await store.createSession('s', 'cli');
        const content = englishText(2);
        expect(content.length).toBeGreaterThanOrEqual(MiB);
        const other = await store.appendMessage('s', 'user', 'summarise the notes below');
        const id = await store.appendMessage('s', 'user', content);

        const messages = await store.getMessages('s');
        expect(messages.map((m) => m.id)).toEqual([other, id]);
        expect(messages[1]!.content === content).toBe(true);
        const word = content
          .slice(0, 1000)
          .split(/[^a-z]+/)
          .filter((w) => w.length >= 5)[3]!;
        expect(await ids(store, word)).toContain(id);
        expect(await ids(store, word, 'newest')).toContain(id);
        const phrase = content.slice(0, 1000).match(/[a-z]+ [a-z]+ [a-z]+/)![0];
        expect(await ids(store, `"${phrase}"`)).toContain(id);
      } finally {
        await store.close();
      }
    }, 180_000);

    it('migrates a populated store from 0003 without losing or changing a row or a search result', async () => {
      const url = await h.freshUrl();
      const upTo0003 = pgFolderUpTo('0003_messages_timestamp_index');
      tmpDirs.push(upTo0003);
      const r = rng(3);
      const words = [
        'deploy',
        'ingress',
        'kubernetes',
        'helm',
        'rollback',
        'postgres',
        'vacuum',
        'latency',
        'budget',
        'token',
      ];
      const word = () => words[Math.floor(r() * words.length)]!;
      const sentence = (n: number) => Array.from({ length: n }, word).join(' ');

      const old = await openStore(url, { migrationsFolder: upTo0003 });
      try {
        expect((await old.migrationStatus()).applied).toEqual(readJournal(upTo0003).entries.map((e) => e.tag));
        for (let s = 0; s < 30; s++) {
          const sid = `session-${s}`;
          await old.createSession(sid, s % 3 === 0 ? 'telegram' : 'cli', { model: 'gpt-5' });
          const batch = [];
          for (let i = 0; i < 100; i++) {
            const k = (s * 100 + i) % 10;
            if (k === 0) {
              batch.push({
                role: 'assistant',
                content: [
                  { type: 'text', text: `structured ${sentence(6)}` },
                  { type: 'image_url', image_url: { url: 'data:x' } },
                ],
              });
            } else if (k === 1) {
              batch.push({
                role: 'assistant',
                content: null,
                toolCalls: [
                  {
                    id: `call_${s}_${i}`,
                    type: 'function',
                    function: { name: 'terminal', arguments: JSON.stringify({ cmd: `kubectl ${word()} pods` }) },
                  },
                ],
                reasoning: `think ${word()}`,
              });
            } else if (k === 2) {
              batch.push({
                role: 'tool',
                content: JSON.stringify({ output: sentence(12) }),
                toolCallId: `call_${s}_${i - 1}`,
                toolName: 'terminal',
              });
            } else if (k === 3) {
              batch.push({ role: 'user', content: `记忆断裂 ${sentence(4)} 中文检索 ${i}` });
            } else if (k === 4 && i % 50 === 4) {
              // Long, but within the old vector's limit: ~60,000 characters, under the 100,000 characters 0004 indexes whole.
              batch.push({ role: 'tool', content: sentence(8000), toolName: 'read_file', tokenCount: 9000 });
            } else {
              batch.push({
                role: k % 2 === 0 ? 'user' : 'assistant',
                content: `${sentence(10)} item${s}x${i}`,
                finishReason: 'stop',
                tokenCount: i,
              });
            }
          }
          await old.appendMessages(sid, batch);
        }
        // The bug this migration fixes: 0003 refuses a 1 MB rev-list.
        await expect(old.appendMessage('session-0', 'tool', revList(4).join('\n'))).rejects.toThrow(
          /too long for tsvector/,
        );
      } finally {
        await old.close();
      }

      const queries: Array<[string, SearchSort?]> = [
        ['deploy'],
        ['kubernetes helm'],
        ['"rollback postgres"'],
        ['ingress OR latency'],
        ['structured'],
        ['kubectl'],
        ['terminal'],
        ['item7x45'],
        ['item1*'],
        ['budget NOT token'],
        ['记忆'],
        ['中文检索'],
        ['断裂'],
        ['vacuum', 'newest'],
        ['token', 'oldest'],
      ];
      // Sessions as the old migration wrote them: the activity columns are added (and filled) by 0008/0009.
      const state = async (store: SessionStore, words: 'vector' | 'store') => {
        const [digest] = await rowsOfStore<{ n: number; messages: string; sessions: string }>(
          store,
          sql`SELECT (SELECT count(*)::int FROM messages) AS n,
                (SELECT md5(string_agg((to_jsonb(m) - 'search_vector' - 'search_length' - 'search_cjk')::text, E'\n' ORDER BY m.id)) FROM messages m) AS messages,
                (SELECT md5(string_agg((to_jsonb(s) - 'last_message_at' - 'chain_last_active')::text, E'\n' ORDER BY s.id)) FROM sessions s) AS sessions`,
        );
        const searches: Record<string, number[]> = {};
        for (const [q, sort] of queries) searches[`${q} ${sort ?? ''}`] = await matchingIds(store, q, sort, words);
        return { digest, searches };
      };

      const reopened = await openStore(url, { migrationsFolder: upTo0003, migrate: false });
      const before = await state(reopened, 'vector').finally(() => reopened.close());
      expect(before.digest!.n).toBe(3000);
      for (const [q, hits] of Object.entries(before.searches)) expect(hits.length, q).toBeGreaterThan(0);

      const store = await openStore(url);
      try {
        const status = await store.migrationStatus();
        expect(status.pending).toEqual([]);
        expect(status.applied).toContain('0004_bounded_search_vector');
        // Every message the old word vector found is found by the block index that replaced it (0010, 0011).
        const after = await state(store, 'store');
        expect(after).toEqual(before);
        // Every row's CJK grams were computed with 0004's bounded expression, and only that index remains.
        const [stale] = await rowsOfStore<{ n: number }>(
          store,
          sql`SELECT count(*)::int AS n FROM messages WHERE search_cjk IS DISTINCT FROM
                message_cjk_grams(message_word_window(message_search_text(content, content_json, tool_name, tool_calls)))`,
        );
        expect(stale!.n).toBe(0);
        const indexes = await rowsOfStore<{ indexname: string }>(
          store,
          sql`SELECT indexname FROM pg_indexes WHERE tablename = 'messages' AND indexname LIKE 'idx_messages_search%' ORDER BY indexname`,
        );
        expect(indexes.map((i) => i.indexname)).toEqual(['idx_messages_search_cjk']);
        // And the message 0003 refused is now stored.
        const big = revList(4).join('\n');
        const id = await store.appendMessage('session-0', 'tool', big);
        expect((await store.getMessages('session-0')).find((m) => m.id === id)!.content === big).toBe(true);
      } finally {
        await store.close();
      }
    }, 300_000);

    it('copies a SQLite store holding 1 MB messages into Postgres, and verify finds no difference', async () => {
      const from = await sqlite.open();
      const to = await h.open();
      try {
        await from.createSession('big', 'cli', { model: 'gpt-5' });
        await from.appendMessage('big', 'user', 'list every commit and read the notes');
        await from.appendMessage('big', 'assistant', null, {
          toolCalls: [
            {
              id: 'c1',
              type: 'function',
              function: { name: 'terminal', arguments: '{"command": "git rev-list --all"}' },
            },
          ],
        });
        const hashes = revList(5);
        await from.appendMessage('big', 'tool', hashes.join('\n'), { toolCallId: 'c1', toolName: 'terminal' });
        await from.appendMessage('big', 'tool', cjkTokens().join(' '), { toolName: 'read_file' });
        await from.appendMessage('big', 'tool', [{ type: 'text', text: englishText(6) }], { toolName: 'read_file' });
        await from.appendMessage('big', 'assistant', 'done: the deploy notes are long');

        const report = await copyStore(from, to, { verify: true });
        expect(report.verification?.problems).toEqual([]);
        expect(report.verification?.ok).toBe(true);
        expect(report.verification?.messages).toEqual({ from: 6, to: 6 });
        expect((await verifyStores(from, to)).ok).toBe(true);

        const a = await from.getMessages('big');
        const b = await to.getMessages('big');
        expect(b.map((m) => m.id)).toEqual(a.map((m) => m.id));
        // Compared without printing megabytes on failure; jsonb reorders object keys, so keys are sorted.
        for (let i = 0; i < a.length; i++)
          expect(canonical(b[i]!.content) === canonical(a[i]!.content), `message ${i}`).toBe(true);
        const hash = hashes.slice(0, 24).find((l) => !splitByPgParser(l))!;
        expect(await ids(to, hash)).toEqual(await ids(from, hash));
      } finally {
        await Promise.all([from.close(), to.close()]);
      }
    }, 300_000);
  });
}
