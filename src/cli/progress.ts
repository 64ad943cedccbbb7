/**
 * Transfer progress for operators: a redrawn bar (count, rate, ETA) on a terminal, and a plain line per
 * phase and per tenth of the messages otherwise (logs and pipes get no carriage returns).
 */
import type { TransferProgress } from '../transfer/pipeline.js';

export const fmt = (n: number) => n.toLocaleString('en-US');

const BAR_WIDTH = 24;
const REDRAW_MS = 100;

function eta(seconds: number): string {
  if (!Number.isFinite(seconds)) return '?';
  if (seconds < 60) return `${Math.ceil(seconds)} s`;
  return `${Math.floor(seconds / 60)} min ${Math.ceil(seconds % 60)} s`;
}

export function progressPrinter(
  write: (text: string) => void,
  tty: boolean,
): { update(p: TransferProgress): void; finish(): void } {
  let lastDraw = 0;
  let lastTenth = -1;
  let drawn = false;
  let messagesStartedAt: number | null = null;
  return {
    update(p) {
      if (p.phase === 'sessions') {
        if (p.done === p.total) {
          if (tty && drawn) write('\r\x1b[2K');
          write(`sessions: ${fmt(p.total)}\n`);
          drawn = false;
        }
        return;
      }
      if (p.phase !== 'messages') return;
      messagesStartedAt ??= p.elapsedSeconds;
      const seconds = Math.max(p.elapsedSeconds - messagesStartedAt, 1e-3);
      const rate = p.done / seconds;
      const share = p.total > 0 ? p.done / p.total : 1;
      if (tty) {
        const now = performance.now();
        if (now - lastDraw < REDRAW_MS && p.done < p.total) return;
        lastDraw = now;
        const filled = Math.round(share * BAR_WIDTH);
        write(
          `\r\x1b[2Kmessages [${'#'.repeat(filled)}${'.'.repeat(BAR_WIDTH - filled)}] ${fmt(p.done)}/${fmt(p.total)} ` +
            `${Math.floor(share * 100)}%  ${fmt(Math.round(rate))} msg/s  ETA ${eta((p.total - p.done) / rate)}`,
        );
        drawn = true;
      } else {
        const tenth = Math.floor(share * 10);
        if (tenth === lastTenth) return;
        lastTenth = tenth;
        write(
          `messages: ${fmt(p.done)} / ${fmt(p.total)} (${Math.floor(share * 100)}%, ${fmt(Math.round(rate))} msg/s)\n`,
        );
      }
    },
    finish() {
      if (tty && drawn) write('\n');
      drawn = false;
    },
  };
}
