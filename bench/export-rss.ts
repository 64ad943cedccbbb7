/**
 * Child process for the bench and the export memory test: export a store to a JSON-lines file with the
 * CLI and print, as one JSON line, the exit code, the CLI's closing note, peak RSS (MiB), the longest
 * event-loop stall (ms: the longest gap between 1 ms ticks) and the seconds taken.
 */
import { main } from '../src/cli/main.js';

const [url, out] = process.argv.slice(2);
let last = performance.now();
let stallMs = 0;
const tick = () => {
  const now = performance.now();
  stallMs = Math.max(stallMs, now - last);
  last = now;
};
const ticker = setInterval(tick, 1);
const started = performance.now();
let note = '';
const code = await main(['export', '--db', url!, '--out', out!], {
  out: (t) => process.stdout.write(t),
  err: (t) => (note += t),
});
const seconds = (performance.now() - started) / 1000;
tick();
clearInterval(ticker);
const figures = { code, note: note.trim(), peakRssMiB: process.resourceUsage().maxRSS / 1024, stallMs, seconds };
process.stdout.write(`${JSON.stringify(figures)}\n`);
process.exitCode = code;
