import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/**
 * Every stdout line a child has printed, and whether its output is complete. Kept from the spawn on, so that
 * a second waitForLine still sees a line that arrived in the same chunk as the first one's (a busy machine
 * delivers a fast child's lines together), and a child that has exited is judged on all it printed.
 */
interface LineLog {
  lines: string[];
  partial: string;
  closed: boolean;
  stderr: string;
  code: number | null;
  readonly waiters: Set<() => void>;
}
const logs = new WeakMap<ChildProcessWithoutNullStreams, LineLog>();

function logOf(child: ChildProcessWithoutNullStreams): LineLog {
  let log = logs.get(child);
  if (log) return log;
  const made: LineLog = { lines: [], partial: '', closed: false, stderr: '', code: null, waiters: new Set() };
  const wake = () => {
    for (const waiter of [...made.waiters]) waiter();
  };
  child.stdout.on('data', (chunk: Buffer) => {
    const lines = (made.partial + chunk.toString()).split('\n');
    made.partial = lines.pop() ?? '';
    made.lines.push(...lines);
    wake();
  });
  child.stderr.on('data', (c: Buffer) => (made.stderr += c.toString()));
  // 'close', not 'exit': 'exit' may come before the last stdout chunk has been read.
  child.once('close', (code) => {
    if (made.partial !== '') made.lines.push(made.partial);
    made.partial = '';
    made.closed = true;
    made.code = code;
    wake();
  });
  logs.set(child, made);
  log = made;
  return log;
}

/** Spawn a TypeScript helper under Node with tsx's loader. */
export function spawnTs(script: string, args: string[]): ChildProcessWithoutNullStreams {
  const file = fileURLToPath(new URL(script, import.meta.url));
  const child = spawn(process.execPath, ['--import', 'tsx', file, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
  logOf(child);
  return child;
}

/**
 * Resolve with the first stdout line after the ones earlier calls returned that satisfies `match`, or reject
 * when the process has closed its output without printing one.
 */
export function waitForLine(child: ChildProcessWithoutNullStreams, match: (line: string) => boolean): Promise<string> {
  const log = logOf(child);
  const consumed = consumedOf(child);
  // From where the line returned last stood when this call was made (calls waiting side by side never skip
  // each other's lines).
  let from = consumed.next;
  return new Promise((resolve, reject) => {
    const check = () => {
      for (let i = from; i < log.lines.length; i++) {
        if (match(log.lines[i]!)) {
          consumed.next = Math.max(consumed.next, i + 1);
          log.waiters.delete(check);
          resolve(log.lines[i]!);
          return;
        }
      }
      from = log.lines.length;
      if (log.closed) {
        log.waiters.delete(check);
        reject(new Error(`process exited (${log.code}) before the expected line; stderr: ${log.stderr}`));
      }
    };
    log.waiters.add(check);
    check();
  });
}

/** Where the next waitForLine starts reading: after the line the previous one returned. */
const positions = new WeakMap<ChildProcessWithoutNullStreams, { next: number }>();
function consumedOf(child: ChildProcessWithoutNullStreams): { next: number } {
  let at = positions.get(child);
  if (!at) {
    at = { next: 0 };
    positions.set(child, at);
  }
  return at;
}

/** When the child has exited and its output is read: its exit code (null when a signal ended it), lines and stderr. */
export function exited(
  child: ChildProcessWithoutNullStreams,
): Promise<{ code: number | null; lines: string[]; stderr: string }> {
  const log = logOf(child);
  return new Promise((resolve) => {
    const check = () => {
      if (!log.closed) return;
      log.waiters.delete(check);
      resolve({ code: log.code, lines: [...log.lines], stderr: log.stderr });
    };
    log.waiters.add(check);
    check();
  });
}
