/**
 * What a build thread runs (src/db/build-thread.ts): a one-pass build of an index (postings-build.ts) from
 * messages sent in id order, then its blocks in batches. One build per thread, its state the module's: a
 * build uses a thread per index, so the two are tokenized and encoded side by side. Tokenizing and encoding happen here, off the event loop that reads the messages and writes the blocks.
 */
import { PostingsBuilder } from './postings-build.js';
import type { PostingsBlock } from './postings-block.js';
import { indexText } from './postings.js';
import type { QueryMode } from './query.js';

const MODES: readonly QueryMode[] = ['words', 'substrings'];
const builders = MODES.map(() => new PostingsBuilder());
const batches: (Generator<PostingsBlock[]> | null)[] = MODES.map(() => null);

/** Add messages (ids ascending, each after the last one added) with their searchable text to one index. */
export interface AddRequest {
  kind: 'add';
  index: number;
  ids: number[];
  texts: string[];
}
/** The next batch of one index's blocks (about `batchBytes`); once none is left, its totals. */
export interface BlocksRequest {
  kind: 'blocks';
  index: number;
  batchBytes: number;
}
export type BuildRequest = AddRequest | BlocksRequest;
export type BlocksAnswer = { blocks: PostingsBlock[] } | { blocks: null; messages: number; tokens: number };

export function handleBuildRequest(request: BuildRequest): BlocksAnswer | null {
  if (request.kind === 'add') {
    const builder = builders[request.index]!;
    const mode = MODES[request.index]!;
    for (let i = 0; i < request.ids.length; i++) builder.add(request.ids[i]!, indexText(request.texts[i]!, mode));
    return null;
  }
  const builder = builders[request.index]!;
  batches[request.index] ??= builder.blocks(request.batchBytes);
  const next = batches[request.index]!.next();
  return next.done ? { blocks: null, messages: builder.messages, tokens: builder.tokens } : { blocks: next.value };
}
