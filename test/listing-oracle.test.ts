/**
 * listSessionsRich against Hermes' own SQL (spec: list_sessions_rich and its recursive CTE) at real scale: a
 * Hermes-format state.db of ~10,000 sessions (compression chains, /branch children, delegates, continuations that
 * do not qualify, equal start times, old sessions resumed later, four sources), imported into an SQLite store and
 * a Postgres store in a non-default schema, and MariaDB (one file per run: test/helpers/corpus-cache.ts). Orders, pages and values must be Hermes'; the compression-tip
 * projection must match getCompressionTip and the tip's own listed values.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ListSessionsRichOptions,
  type SessionStore,
  importHermesStateDb,
  openStore,
  roundToMicros,
} from '../src/index.js';
import { previewFromRaw } from '../src/repos/rows.js';
import { type Harness, postgresHarness, reportAvailability, mariadbHarness } from './backends.js';
import { harnessAvailable } from '../src/testing/index.js';
import { LISTING_HISTORY, sharedHermesHistory } from './helpers/corpus-cache.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hsdb-listing-oracle-'));
let file: string;
let hermes: Database.Database;

interface OracleRow {
  id: string;
  last_active: number;
  _preview_raw: string;
}

const ROOTS_AND_BRANCHES = `(s.parent_session_id IS NULL OR EXISTS (SELECT 1 FROM sessions p WHERE p.id = s.parent_session_id
    AND p.end_reason = 'branched' AND s.started_at >= p.ended_at))`;
const COLUMNS = `s.id,
  COALESCE((SELECT SUBSTR(REPLACE(REPLACE(m.content, char(10), ' '), char(13), ' '), 1, 63) FROM messages m
    WHERE m.session_id = s.id AND m.role = 'user' AND m.content IS NOT NULL ORDER BY m.timestamp, m.id LIMIT 1), '') AS _preview_raw,
  COALESCE((SELECT MAX(m2.timestamp) FROM messages m2 WHERE m2.session_id = s.id), s.started_at) AS last_active`;

/** Hermes' list_sessions_rich SQL, verbatim but for the id tie-break we add to its started_at order. */
function hermesList(o: ListSessionsRichOptions): OracleRow[] {
  const where: string[] = [];
  const params: unknown[] = [];
  if (!o.includeChildren) where.push(ROOTS_AND_BRANCHES);
  if (o.source) {
    where.push('s.source = ?');
    params.push(o.source);
  }
  if (o.excludeSources?.length) {
    where.push(`s.source NOT IN (${o.excludeSources.map(() => '?').join(', ')})`);
    params.push(...o.excludeSources);
  }
  const w = where.length > 0 ? `WHERE ${where.join(' AND ')}` : '';
  const page = 'LIMIT ? OFFSET ?';
  const paging = [o.limit ?? 20, o.offset ?? 0];
  if (!o.orderByLastActive) {
    return hermes
      .prepare(`SELECT ${COLUMNS} FROM sessions s ${w} ORDER BY s.started_at DESC, s.id DESC ${page}`)
      .all(...params, ...paging) as OracleRow[];
  }
  return hermes
    .prepare(
      `WITH RECURSIVE chain(root_id, cur_id) AS (
        SELECT s.id, s.id FROM sessions s ${w}
        UNION ALL
        SELECT c.root_id, child.id FROM chain c
        JOIN sessions parent ON parent.id = c.cur_id
        JOIN sessions child ON child.parent_session_id = c.cur_id
        WHERE parent.end_reason = 'compression' AND child.started_at >= parent.ended_at
      ),
      chain_max AS (
        SELECT root_id, MAX(COALESCE((SELECT MAX(m.timestamp) FROM messages m WHERE m.session_id = cur_id),
                                     (SELECT started_at FROM sessions ss WHERE ss.id = cur_id))) AS effective_last_active
        FROM chain GROUP BY root_id
      )
      SELECT ${COLUMNS} FROM sessions s LEFT JOIN chain_max cm ON cm.root_id = s.id ${w}
      ORDER BY COALESCE(cm.effective_last_active, s.started_at) DESC, s.started_at DESC, s.id DESC ${page}`,
    )
    .all(...params, ...params, ...paging) as OracleRow[];
}

const FILTERS: ListSessionsRichOptions[] = [
  {},
  { source: 'telegram' },
  { excludeSources: ['cli', 'tool'] },
  { includeChildren: true },
  { includeChildren: true, source: 'discord' },
];
const PAGES = [
  { limit: 50, offset: 0 },
  { limit: 50, offset: 50 },
  { limit: 100, offset: 3000 },
  { limit: -1, offset: 0 },
];

beforeAll(async () => {
  file = await sharedHermesHistory(LISTING_HISTORY);
  hermes = new Database(file, { readonly: true });
}, 300_000);

afterAll(() => {
  hermes?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('the Hermes file the oracle reads', () => {
  it('holds 10,000+ sessions with long compression chains, branches, delegates and resumed sessions', () => {
    const count = (q: string) => hermes.prepare(q).pluck().get() as number;
    expect(count('SELECT COUNT(*) FROM sessions')).toBeGreaterThanOrEqual(10_000);
    const chainChild = `FROM sessions c JOIN sessions p ON p.id = c.parent_session_id
      WHERE p.end_reason = 'compression' AND c.started_at >= p.ended_at`;
    expect(count(`SELECT COUNT(*) ${chainChild}`)).toBeGreaterThan(1000);
    // A continuation of a continuation of a continuation: chains of four sessions or more.
    expect(
      count(`SELECT COUNT(*) FROM sessions c JOIN sessions p ON p.id = c.parent_session_id JOIN sessions g ON g.id = p.parent_session_id
        WHERE p.end_reason = 'compression' AND g.end_reason = 'compression' AND g.parent_session_id IS NOT NULL`),
    ).toBeGreaterThan(10);
    expect(
      count(
        "SELECT COUNT(*) FROM sessions c JOIN sessions p ON p.id = c.parent_session_id WHERE p.end_reason = 'branched'",
      ),
    ).toBeGreaterThan(300);
    expect(
      count('SELECT COUNT(*) FROM sessions s WHERE NOT EXISTS (SELECT 1 FROM messages m WHERE m.session_id = s.id)'),
    ).toBeGreaterThan(100);
    // Activity order is not start order: resumed sessions and chains move up.
    const byActivity = hermesList({ orderByLastActive: true, limit: 200 }).map((r) => r.id);
    const byStart = hermesList({ limit: 200 }).map((r) => r.id);
    expect(byActivity).not.toEqual(byStart);
  });
});

const targets: Array<{ name: string; open: () => Promise<SessionStore>; cleanup?: () => Promise<void> }> = [
  { name: 'sqlite-file', open: () => openStore(`sqlite:${path.join(dir, 'store.db')}`) },
];
const pg: Harness = await postgresHarness('listing_oracle');
if (reportAvailability(pg))
  targets.push({ name: 'postgres (schema listing_oracle)', open: () => pg.open(), cleanup: () => pg.cleanup() });
// MariaDB computes chain activity with Hermes' own CTE (its activity columns are not maintained yet).
const mariadb = await mariadbHarness();
if (harnessAvailable(mariadb))
  targets.push({ name: 'mariadb', open: () => mariadb.open(), cleanup: () => mariadb.cleanup() });

for (const target of targets) {
  describe(`listSessionsRich = Hermes' SQL on ~10,000 sessions [${target.name}]`, () => {
    let store: SessionStore;
    beforeAll(async () => {
      store = await target.open();
      await importHermesStateDb(file, store, { verify: false });
    }, 600_000);
    afterAll(async () => {
      await store?.close();
      await target.cleanup?.();
    });

    it('gives the same rows, order, last activity and preview for every filter, order and page', async () => {
      for (const filter of FILTERS) {
        for (const orderByLastActive of [true, false]) {
          for (const page of PAGES) {
            const o = { ...filter, ...page, orderByLastActive };
            const expected = hermesList(o);
            const got = await store.listSessionsRich({ ...o, projectCompressionTips: false });
            const label = JSON.stringify(o);
            expect(
              got.map((r) => r.id),
              label,
            ).toEqual(expected.map((r) => r.id));
            if (page.limit === -1) continue;
            // Postgres keeps microseconds (timestamptz): both sides to the microsecond.
            expect(
              got.map((r) => roundToMicros(r.lastActive)),
              label,
            ).toEqual(expected.map((r) => roundToMicros(r.last_active)));
            // Structured first messages preview blank in Hermes (its SQL stops at "\x00json:"), text parts in ours.
            const previews = (rows: { preview: string }[]) =>
              rows.map((r, i) => (expected[i]!._preview_raw === '' ? '' : r.preview));
            expect(previews(got), label).toEqual(expected.map((r) => previewFromRaw(r._preview_raw)));
          }
        }
      }
    });

    it('projects each compression root onto its tip: the tip of getCompressionTip, with the tip’s listed values', async () => {
      const everything = new Map(
        (await store.listSessionsRich({ includeChildren: true, limit: -1 })).map((r) => [r.id, r] as const),
      );
      let projected = 0;
      for (const orderByLastActive of [true, false]) {
        const listed = await store.listSessionsRich({ orderByLastActive, limit: 400 });
        const unprojected = await store.listSessionsRich({
          orderByLastActive,
          limit: 400,
          projectCompressionTips: false,
        });
        expect(listed.map((r) => r.lineageRootId ?? r.id)).toEqual(unprojected.map((r) => r.id));
        for (const [i, row] of listed.entries()) {
          const root = unprojected[i]!;
          const tipId = root.endReason === 'compression' ? await store.getCompressionTip(root.id) : root.id;
          if (tipId === root.id) {
            expect(row).toEqual(root);
            continue;
          }
          projected++;
          const tip = everything.get(tipId)!;
          expect(row).toEqual({
            ...root,
            lineageRootId: root.id,
            id: tip.id,
            endedAt: tip.endedAt,
            endReason: tip.endReason,
            messageCount: tip.messageCount,
            toolCallCount: tip.toolCallCount,
            title: tip.title,
            lastActive: tip.lastActive,
            preview: tip.preview,
            model: tip.model,
            systemPrompt: tip.systemPrompt,
          });
        }
      }
      expect(projected).toBeGreaterThan(50);
    });
  });
}
