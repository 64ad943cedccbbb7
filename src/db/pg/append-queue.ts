/**
 * Client-side group commit for Postgres appendMessage. An append that finds fewer than `maxSending` appends in
 * flight is sent at once, alone, as the one-row statement (one caller never waits for company). Appends that
 * arrive while that many are in flight wait, and the next free turn sends all of them (up to a bound) as one
 * statement of many rows: one round trip, one commit, and the messages triggers run once for the lot (they
 * are statement-level), which is what makes it beat 16 separate commits grouped by the server.
 *
 * Appends of one session never meet in a batch: each waits in its lane for the previous one to settle before
 * it is queued (runner.ts). A batch is atomic: when it fails (and its connection did not), nothing was
 * written, and each of its appends is sent again alone, so only a failing one fails.
 */
import type { PgAppendStatements } from './append-statement.js';
import { SESSION_PARAM } from './append-statement.js';
import { connectionLost } from './open.js';

type Rows = Array<Record<string, unknown>>;

/** What the queue sends statements through (PgConnection's statement). */
export interface StatementRunner {
  statement(text: string, params: readonly unknown[]): Promise<Rows>;
}

interface Waiting {
  readonly params: readonly unknown[];
  readonly chars: number;
  resolve(id: unknown): void;
  reject(error: unknown): void;
}

/** At most this many appends, and about this many characters of parameters, go in one statement. */
const MAX_BATCH = 256;
const MAX_BATCH_CHARS = 4 * 1024 * 1024;

const charsOf = (params: readonly unknown[]) =>
  params.reduce<number>((n, p) => n + (typeof p === 'string' ? p.length : 8), 0);

export class AppendQueue {
  private readonly waiting: Waiting[] = [];
  private sending = 0;

  constructor(
    private readonly runner: StatementRunner,
    private readonly statements: PgAppendStatements,
    private readonly maxSending: number,
  ) {}

  /** Append one message (its parameters): the new id, or undefined when its session does not exist. */
  append(params: readonly unknown[]): Promise<unknown> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ params, chars: charsOf(params), resolve, reject });
      this.pump();
    });
  }

  private pump(): void {
    while (this.sending < this.maxSending && this.waiting.length > 0) {
      const batch = this.take();
      this.sending++;
      void this.send(batch).then(() => {
        this.sending--;
        this.pump();
      });
    }
  }

  /** The next batch: in request order, bounded, one append per session (a later one waits for the next turn). */
  private take(): Waiting[] {
    const batch: Waiting[] = [];
    const sessions = new Set<unknown>();
    let chars = 0;
    for (let i = 0; i < this.waiting.length && batch.length < MAX_BATCH; ) {
      const next = this.waiting[i]!;
      const session = next.params[SESSION_PARAM];
      const seen = sessions.has(session);
      // A session met once is done for this batch, even when its append stays behind (its order holds).
      sessions.add(session);
      if (seen || (batch.length > 0 && chars + next.chars > MAX_BATCH_CHARS)) {
        i++;
        continue;
      }
      chars += next.chars;
      batch.push(next);
      this.waiting.splice(i, 1);
    }
    return batch;
  }

  /** Never rejects: each append's own promise carries its outcome. */
  private async send(batch: Waiting[]): Promise<void> {
    if (batch.length === 1) return this.sendAlone(batch[0]!);
    let rows: Rows;
    try {
      rows = await this.runner.statement(this.statements.many, [JSON.stringify(batch.map((w) => w.params))]);
    } catch (error) {
      // A lost connection leaves the outcome unknown, as for an append sent alone: each one learns it.
      if (connectionLost(error)) for (const w of batch) w.reject(error);
      else await Promise.all(batch.map((w) => this.sendAlone(w)));
      return;
    }
    const ids = new Map(rows.map((row) => [row.session_id, row.id]));
    for (const w of batch) w.resolve(ids.get(w.params[SESSION_PARAM]));
  }

  private async sendAlone(w: Waiting): Promise<void> {
    try {
      const rows = await this.runner.statement(this.statements.one, w.params);
      w.resolve(rows[0]?.id);
    } catch (error) {
      w.reject(error);
    }
  }
}
