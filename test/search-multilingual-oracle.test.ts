/**
 * Search in every script against Hermes itself, on every engine: a 20,000-message Hermes-format state.db (Hermes'
 * DDL and FTS triggers) of text in Devanagari, Thai, Tamil, Arabic, Hebrew, Cyrillic, Greek, Turkish (dotted and
 * dotless i), German (ß), NFC and NFD accents, emoji, CJK and mixed-script code terms, some of it in tool calls as
 * Hermes writes them (Python's json.dumps). Hermes' own search SQL on the file is the oracle; the file is imported
 * into each engine, and every query (words as written, lower- and upper-cased, without accents, prefixes, phrases
 * from the data, OR, NOT, CJK of 2, 3 and 4 characters, code terms) must return Hermes' ids in Hermes' order and
 * Hermes' snippets, by relevance, newest and oldest, on the first page and a deeper one.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHermesStateDb, prng } from '../examples/hermes-state-db.js';
import { type SessionStore, importHermesStateDb } from '../src/index.js';
import { pythonJsonDumps } from '../src/codecs/python-json.js';
import { DEFAULT_RANK_WINDOW } from '../src/repos/search.js';
import {
  type Harness,
  mariadbHarness,
  pgliteHarness,
  postgresHarness,
  reportAvailability,
  sqliteFileHarness,
} from './backends.js';
import { hermesMatchCount, hermesSearch } from './helpers/hermes-oracle.js';
import { SCRIPT_WORDS, multilingualTexts } from './helpers/multilingual.js';

const MESSAGES = 20_000;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hsdb-multilingual-'));
const file = path.join(dir, 'state.db');
let hermes: Database.Database;
let queries: string[];

/** The history, written as Hermes writes it: sessions of 5-60 messages, a tool call now and then. */
function writeHistory(): string[] {
  const texts = multilingualTexts(MESSAGES, 2027);
  const random = prng(2027);
  const db = createHermesStateDb(file);
  const insertSession = db.prepare(
    `INSERT INTO sessions (id, source, user_id, model, started_at, message_count) VALUES (?, ?, '42', 'openai/gpt-5', ?, ?)`,
  );
  const insertMessage =
    db.prepare(`INSERT INTO messages (session_id, role, content, tool_call_id, tool_calls, tool_name,
    timestamp, finish_reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`);
  db.transaction(() => {
    let t = 1_765_000_000.5;
    for (let i = 0, s = 0; i < MESSAGES; s++) {
      const size = Math.min(MESSAGES - i, 5 + Math.floor(random() * 56));
      const id = `20261128_${String(s).padStart(6, '0')}`;
      insertSession.run(id, ['cli', 'telegram', 'discord'][s % 3], t, size);
      for (let k = 0; k < size; k++, i++) {
        // Now and then two messages in the same second: ties in time order go to bm25, then id.
        if (random() > 0.02) t += 1 + Math.floor(random() * 300) + Math.floor(random() * 1e6) / 1e6;
        const text = texts[i]!;
        if (k % 9 === 4) {
          const call = [{ id: `call_${i}`, type: 'function', function: { name: 'terminal', arguments: text } }];
          insertMessage.run(id, 'assistant', null, null, pythonJsonDumps(call), null, t, 'tool_calls');
        } else if (k % 9 === 5) insertMessage.run(id, 'tool', text, `call_${i - 1}`, null, 'terminal', t, null);
        else insertMessage.run(id, k % 2 === 0 ? 'user' : 'assistant', text, null, null, null, t, 'stop');
      }
    }
  })();
  db.close();
  return texts;
}

/** Words of every script in every spelling, prefixes, phrases and substrings taken from the data, operators. */
function queriesOf(texts: readonly string[]): string[] {
  const out = new Set<string>();
  const scripts = Object.values(SCRIPT_WORDS);
  for (const words of scripts)
    for (const w of words) {
      for (const spelling of [w, w.toLowerCase(), w.toUpperCase(), w.normalize('NFD'), w.normalize('NFC')])
        out.add(spelling);
      // Without accents: FTS5 folds them (remove_diacritics), so `cafe` finds café.
      out.add(w.normalize('NFD').replace(/\p{M}/gu, ''));
      if ([...w].length > 3) out.add(`${[...w].slice(0, 2).join('')}*`);
    }
  for (const [i, words] of scripts.entries()) {
    const other = scripts[(i + 5) % scripts.length]!;
    out.add(`${words[0]} OR ${other[1]}`);
    out.add(`${words[1]} NOT ${words[0]}`);
    out.add(`${words[0]} ${other[0]}`);
  }
  const random = prng(11);
  for (let n = 0; n < 40; n++) {
    // A phrase of two neighbouring words of some message, as a user quotes what they remember.
    const parts = texts[Math.floor(random() * texts.length)]!.split(/[\s,.()/“”。\u3000-]+/u).filter(Boolean);
    if (parts.length >= 2) {
      const at = Math.floor(random() * (parts.length - 1));
      out.add(`"${parts[at]} ${parts[at + 1]}"`);
    }
  }
  for (const w of SCRIPT_WORDS.cjk!) {
    const chars = [...w];
    for (const n of [2, 3, 4]) if (chars.length >= n) out.add(chars.slice(chars.length - n).join(''));
  }
  return [...out].filter((q) => q.trim() !== '');
}

beforeAll(() => {
  const texts = writeHistory();
  hermes = new Database(file, { readonly: true });
  queries = queriesOf(texts);
}, 300_000);

afterAll(() => {
  hermes?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const harnesses: Harness[] = [sqliteFileHarness(), pgliteHarness(), await postgresHarness(), await mariadbHarness()];
for (const h of harnesses) {
  const available = reportAvailability(h);
  describe.skipIf(!available)(
    `multilingual search oracle, Hermes' own SQL on ${MESSAGES.toLocaleString('en')} messages [${h.name}]${available ? '' : ` (skipped: ${h.unavailable})`}`,
    () => {
      let store: SessionStore;
      beforeAll(async () => {
        store = await h.open();
        await importHermesStateDb(file, store, { verify: false });
      }, 600_000);
      afterAll(async () => {
        await store?.close();
        await h.cleanup();
      });

      it("returns Hermes' ids, order and snippets for text in every script, in every order and page", async () => {
        expect(queries.length).toBeGreaterThan(300);
        const mismatches: string[] = [];
        let compared = 0;
        let nonEmpty = 0;
        for (const query of queries)
          for (const sort of [null, 'newest', 'oldest'] as const) {
            // Over the rank window, relevance ranks the newest matches only (searchRankWindow): not Hermes'.
            if (sort === null && hermesMatchCount(hermes, query) > DEFAULT_RANK_WINDOW) continue;
            for (const [limit, offset] of [
              [20, 0],
              [10, 30],
            ] as const) {
              const expected = hermesSearch(hermes, query, { sort, limit, offset });
              const got = await store.searchMessages(query, { sort, limit, offset });
              compared++;
              if (expected.length > 0) nonEmpty++;
              const want = JSON.stringify(expected.map((x) => [x.id, x.snippet]));
              if (JSON.stringify(got.map((x) => [x.id, x.snippet])) !== want) {
                const at = expected.findIndex((e, i) => got[i]?.id !== e.id || got[i]?.snippet !== e.snippet);
                const ours = got[at] && { id: got[at]!.id, snippet: got[at]!.snippet };
                mismatches.push(
                  `${JSON.stringify(query)} sort=${sort} offset=${offset}, at ${at}: ours ${JSON.stringify(ours)}, Hermes ${JSON.stringify(expected[at])} (${got.length} vs ${expected.length})`,
                );
              }
            }
          }
        expect(mismatches.slice(0, 10)).toEqual([]);
        expect(compared).toBeGreaterThan(1500);
        // Not a comparison of empty pages.
        expect(nonEmpty).toBeGreaterThan(compared * 0.6);
      }, 900_000);
    },
  );
}
