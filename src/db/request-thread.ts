/**
 * A worker thread that answers numbered requests, as the engines' off-loop work uses it (SQLite's
 * maintenance and search workers, PGlite's host thread). The thread is referenced only while a request
 * waits for its answer, so an idle one never keeps the process alive; once it fails or exits, every waiting
 * and later request is rejected with the same error.
 *
 * The thread's code is inline (an eval worker, CommonJS) so that it starts the same way from TypeScript
 * sources under a test runner and from the compiled package. It answers `{ id, ok, result }` or
 * `{ id, ok: false, error }` for each `{ id, ...request }` it receives.
 */
import { Worker } from 'node:worker_threads';

/**
 * The parent's node options for the worker, without --input-type: it describes the parent's own `-e` text,
 * and an app started with `node --input-type=module -e …` would make our CommonJS source an ES module
 * ("require is not defined"). Everything else (loaders, --require, limits) is inherited as by default.
 */
export function workerExecArgv(parent: readonly string[]): string[] {
  const kept: string[] = [];
  for (let i = 0; i < parent.length; i++) {
    if (parent[i] === '--input-type') i++;
    else if (!parent[i]!.startsWith('--input-type=')) kept.push(parent[i]!);
  }
  return kept;
}

export interface RequestThreadOptions {
  /** The thread's CommonJS source. */
  source: string;
  workerData: unknown;
  /** The error a request rejects with, from the `error` the thread answered. */
  decodeError(error: unknown): Error;
  /** What waiting and later requests reject with once the thread threw, or exited with `code`. */
  failed(cause: Error | null, code: number | null): Error;
}

type Pending = { resolve: (value: unknown) => void; reject: (error: unknown) => void };

export class RequestThread<Request extends object> {
  private readonly worker: Worker;
  private readonly pending = new Map<number, Pending>();
  private next = 0;
  private failure: Error | null = null;

  constructor(private readonly options: RequestThreadOptions) {
    this.worker = new Worker(options.source, {
      eval: true,
      execArgv: workerExecArgv(process.execArgv),
      workerData: options.workerData,
    });
    this.worker.unref();
    this.worker.on('message', (m: { id: number; ok: boolean; result?: unknown; error?: unknown }) => {
      const p = this.pending.get(m.id);
      if (!p) return;
      this.pending.delete(m.id);
      if (m.ok) p.resolve(m.result);
      else p.reject(this.options.decodeError(m.error));
    });
    this.worker.on('error', (error) => this.fail(options.failed(error, null)));
    this.worker.on('exit', (code) => this.fail(options.failed(null, code)));
  }

  private fail(error: Error): void {
    this.failure ??= error;
    for (const p of this.pending.values()) p.reject(this.failure);
    this.pending.clear();
  }

  /** Why the thread can answer no more (it threw or exited), or null while it runs. */
  get failed(): Error | null {
    return this.failure;
  }

  send(request: Request): Promise<unknown> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      const id = this.next++;
      this.pending.set(id, { resolve, reject });
      this.worker.ref(); // busy: keep the process alive until the answer arrives
      this.worker.postMessage({ id, ...request });
    }).finally(() => {
      if (this.pending.size === 0) this.worker.unref();
    });
  }

  /** End the thread. */
  async terminate(): Promise<void> {
    // Referenced until the thread has exited: an unreferenced worker's terminate() does not keep the process
    // alive, and a caller awaiting it as its last step would see the process end first (exit code 13).
    this.worker.ref();
    await this.worker.terminate();
  }
}
