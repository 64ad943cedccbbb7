/**
 * A one-pass index build (src/search/build-worker.ts) on a worker thread: the caller reads messages and writes
 * blocks while the thread tokenizes and encodes, so neither holds the event loop nor waits for the other. The
 * worker loads the build's module itself (compiled JavaScript in the package; under TypeScript sources, through
 * tsx, a development dependency), unlike request-thread.ts' inline sources: the tokenizer is too large to inline.
 */
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import type { BlocksAnswer, BuildRequest } from '../search/build-worker.js';
import { RequestThread } from './request-thread.js';

const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const loaded = (async () => {
  if (workerData.tsx !== null) (await import(workerData.tsx)).register();
  return import(workerData.module);
})();
parentPort.on('message', async (m) => {
  try {
    const { handleBuildRequest } = await loaded;
    parentPort.postMessage({ id: m.id, ok: true, result: handleBuildRequest(m) });
  } catch (error) {
    parentPort.postMessage({ id: m.id, ok: false, error: { message: String(error && error.message), stack: error && error.stack } });
  }
});
`;

const fromSources = import.meta.url.endsWith('.ts');
const moduleUrl = new URL(`../search/build-worker.${fromSources ? 'ts' : 'js'}`, import.meta.url).href;

/** tsx's ESM API (its CommonJS build registers the hooks under a wrong path from a worker's eval source). */
function tsxEsmApi(): string {
  const commonJs = createRequire(import.meta.url).resolve('tsx/esm/api');
  return pathToFileURL(commonJs.replace(/\.cjs$/, '.mjs')).href;
}

const failure = (prefix: string) => (error: unknown) => {
  const e = error as { message?: string; stack?: string };
  const out = new Error(`search index build: ${prefix}${e.message ?? String(error)}`);
  if (e.stack) out.stack = e.stack;
  return out;
};

/**
 * `promise`, marked handled: requests are sent ahead of being awaited, and a build that fails first (a statement)
 * never awaits them; their rejection is still seen by whoever awaits them.
 */
function handled<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => {});
  return promise;
}

export class BuildThread {
  private readonly thread = new RequestThread<BuildRequest>({
    source: WORKER_SOURCE,
    workerData: {
      module: moduleUrl,
      tsx: fromSources ? tsxEsmApi() : null,
    },
    decodeError: failure(''),
    failed: (cause, code) => failure('the thread stopped: ')(cause ?? new Error(`exit code ${code}`)),
  });

  /** Add messages to index `index`, ids ascending; settles once the thread has tokenized them. */
  add(index: number, ids: number[], texts: string[]): Promise<void> {
    return handled(this.thread.send({ kind: 'add', index, ids, texts }) as Promise<void>);
  }

  /** The next batch of index `index`'s blocks; `blocks: null` with the index's totals once none is left. */
  blocks(index: number, batchBytes: number): Promise<BlocksAnswer> {
    return handled(this.thread.send({ kind: 'blocks', index, batchBytes }) as Promise<BlocksAnswer>);
  }

  terminate(): Promise<void> {
    return this.thread.terminate();
  }
}
