/**
 * What library-written postings would cost (issue 27's "measure before choosing"), on a history Hermes wrote
 * (BENCH_POSTINGS_SOURCE, default ../shared/fixtures/hermes-v11-large-dev.db): every message's indexed text
 * (FTS5's own content table) is tokenized by src/search/postings.ts for the words index and for the trigram
 * index, and each term's list is sized in FTS5's doclist encoding (delta ids, counts, delta positions as
 * varints). Prints, per index: the tokenizer's time per message, terms, postings, the encoded bytes, the same
 * stored as rows of up to 4 KB per term with a Postgres row's and its key's overhead (an estimate), and
 * FTS5's own index in the file (dbstat) beside them. Checks on the way that every term's message and
 * occurrence counts equal FTS5's (fts5vocab), so the sizes are of the same postings FTS5 holds.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { indexText } from '../src/search/postings.js';
import type { QueryMode } from '../src/search/query.js';
import { fts5Size } from './search.js';

const SOURCE = path.resolve(process.env.BENCH_POSTINGS_SOURCE ?? '../shared/fixtures/hermes-v11-large-dev.db');
/** The history the postings sections read (BENCH_POSTINGS_SOURCE). */
export const postingsSource = () => SOURCE;
/** A block row's overhead on Postgres: tuple header and line pointer, the first id, the bytea's header. */
const ROW_OVERHEAD = 24 + 4 + 8 + 4;
/** Its key in a btree on (term, first_id): the index tuple's header and line pointer, the first id. */
const KEY_OVERHEAD = 8 + 4 + 8;
const BLOCK_BYTES = 4096;

export interface PostingsRow {
  index: 'words' | 'trigram';
  messages: number;
  tokenizeMs: number;
  terms: number;
  postings: number;
  occurrences: number;
  encodedMiB: number;
  /** The encoded lists as rows of up to BLOCK_BYTES per term, with row and key overheads. */
  asRowsMiB: number;
  fts5MiB: number;
  /** Terms whose message count or occurrence count differs from FTS5's (0 when the postings are FTS5's). */
  differentFromFts5: number;
}

const varintBytes = (v: number) => (v < 0x80 ? 1 : v < 0x4000 ? 2 : v < 0x200000 ? 3 : v < 0x10000000 ? 4 : 5);

interface TermList {
  lastId: number;
  bytes: number;
  postings: number;
  occurrences: number;
}

function measureIndex(db: Database.Database, mode: QueryMode, vocabOf: string, fts5Bytes: number): PostingsRow {
  const lists = new Map<string, TermList>();
  let messages = 0;
  let tokenizeMs = 0;
  const rows = db.prepare('SELECT id, c0 AS text FROM messages_fts_content ORDER BY id').iterate() as Iterable<{
    id: number;
    text: string | null;
  }>;
  for (const { id, text } of rows) {
    messages++;
    if (text === null) continue;
    const t = performance.now();
    const { terms } = indexText(text, mode);
    tokenizeMs += performance.now() - t;
    for (const [term, positions] of terms) {
      let list = lists.get(term);
      if (!list) {
        list = { lastId: 0, bytes: 0, postings: 0, occurrences: 0 };
        lists.set(term, list);
      }
      let bytes = varintBytes(id - list.lastId) + varintBytes(positions.length);
      for (let i = 0; i < positions.length; i++)
        bytes += varintBytes(i === 0 ? positions[0]! : positions[i]! - positions[i - 1]!);
      list.bytes += bytes;
      list.lastId = id;
      list.postings++;
      list.occurrences += positions.length;
    }
  }
  let encoded = 0;
  let asRows = 0;
  let postings = 0;
  let occurrences = 0;
  for (const [term, list] of lists) {
    encoded += list.bytes + Buffer.byteLength(term) + 1;
    const blocks = Math.ceil(list.bytes / BLOCK_BYTES);
    asRows += list.bytes + blocks * (ROW_OVERHEAD + KEY_OVERHEAD + 2 * (Buffer.byteLength(term) + 1));
    postings += list.postings;
    occurrences += list.occurrences;
  }
  // FTS5's own counts per term: the postings above are FTS5's when every term has the same two counts.
  const vocab = new Database(':memory:');
  let different = 0;
  try {
    vocab.exec(`ATTACH '${SOURCE.replace(/'/g, "''")}' AS h`);
    vocab.exec(`CREATE VIRTUAL TABLE temp.v USING fts5vocab(h, ${vocabOf}, row)`);
    let seen = 0;
    for (const r of vocab.prepare('SELECT term, doc, cnt FROM temp.v').iterate() as Iterable<{
      term: string;
      doc: number;
      cnt: number;
    }>) {
      seen++;
      const ours = lists.get(r.term);
      if (!ours || ours.postings !== r.doc || ours.occurrences !== r.cnt) different++;
    }
    different += Math.max(0, lists.size - seen);
  } finally {
    vocab.close();
  }
  return {
    index: mode === 'words' ? 'words' : 'trigram',
    messages,
    tokenizeMs,
    terms: lists.size,
    postings,
    occurrences,
    encodedMiB: encoded / 2 ** 20,
    asRowsMiB: asRows / 2 ** 20,
    fts5MiB: fts5Bytes / 2 ** 20,
    differentFromFts5: different,
  };
}

export function benchPostings(): { rows: PostingsRow[]; notes: string[] } {
  if (!fs.existsSync(SOURCE)) return { rows: [], notes: [`postings skipped: ${SOURCE} is missing`] };
  const db = new Database(SOURCE, { readonly: true });
  try {
    const fts5 = fts5Size(SOURCE, 'FTS5');
    return {
      rows: [
        measureIndex(db, 'words', 'messages_fts', fts5.words),
        measureIndex(db, 'substrings', 'messages_fts_trigram', fts5.trigram),
      ],
      notes: [`postings of ${SOURCE}: FTS5's index there is ${fts5.index.parts} MiB`],
    };
  } finally {
    db.close();
  }
}
