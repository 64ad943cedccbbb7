/**
 * An empty block index built in one pass from the queued messages, the same on every engine that keeps one
 * (Postgres, MySQL): the engine reads messages and writes blocks, a build thread (build-thread.ts) tokenizes
 * and encodes between, so neither the event loop nor the database waits for the other.
 */
import type { PostingsBlock } from '../search/postings-block.js';
import { BuildThread } from './build-thread.js';
import { type Op, awaitOp } from './ops.js';

/** What a build reads and writes through its engine's statements. */
export interface BlocksBuildIo {
  /** The searchable text of these messages, in id order; messages that are gone are left out. */
  texts(ids: number[]): Op<{ ids: number[]; texts: string[] }>;
  /** Insert these blocks of index `kind` (0 words, 1 trigrams). */
  insert(kind: number, blocks: PostingsBlock[]): Op<void>;
  /** Record index `kind`'s corpus totals. */
  totals(kind: number, messages: number, tokens: number): Op<void>;
}

/** Index kinds, as the `kind` column numbers them. */
const KINDS = [0, 1];
/** Text read per statement: the threads tokenize one read while the next is read. */
const READ_BYTES = 1 << 20;
const READ_ROWS = 5_000;
/** Bytes of blocks a thread hands over at a time, and how many batches it may encode ahead. */
const BATCH_BYTES = 256 * 1024;
const BATCHES_AHEAD = 4;

/** Build both indexes from `queued` (ids ascending, each with its text's size in bytes). */
export function* buildBlocks(queued: readonly { id: number; bytes: number }[], io: BlocksBuildIo): Op<void> {
  // A thread per index: the trigram index costs about three times the words'.
  const threads = KINDS.map(() => new BuildThread());
  try {
    // At most two reads wait on the threads.
    const pending: Promise<unknown>[] = [];
    for (let i = 0; i < queued.length; ) {
      const ids: number[] = [];
      let bytes = 0;
      while (i < queued.length && (ids.length === 0 || (bytes < READ_BYTES && ids.length < READ_ROWS))) {
        ids.push(queued[i]!.id);
        bytes += queued[i++]!.bytes;
      }
      const found = yield* io.texts(ids);
      pending.push(Promise.all(KINDS.map((kind) => threads[kind]!.add(kind, found.ids, found.texts))));
      if (pending.length > 2) yield* awaitOp(pending.shift()!);
    }
    for (const added of pending) yield* awaitOp(added);
    // Each thread encodes up to BATCHES_AHEAD batches ahead of the one being written (the trigram thread while
    // the words' blocks are written). Asked past the end, a thread answers its totals again.
    const ahead = KINDS.map((kind) =>
      Array.from({ length: BATCHES_AHEAD }, () => threads[kind]!.blocks(kind, BATCH_BYTES)),
    );
    for (const kind of KINDS)
      for (;;) {
        const answer = yield* awaitOp(ahead[kind]!.shift()!);
        if (answer.blocks === null) {
          yield* io.totals(kind, answer.messages, answer.tokens);
          break;
        }
        ahead[kind]!.push(threads[kind]!.blocks(kind, BATCH_BYTES));
        yield* io.insert(kind, answer.blocks);
      }
  } finally {
    for (const thread of threads) void thread.terminate();
  }
}
