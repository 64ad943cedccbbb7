import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** Spawn a TypeScript helper under Node with tsx's loader. */
export function spawnTs(script: string, args: string[]): ChildProcessWithoutNullStreams {
  const file = fileURLToPath(new URL(script, import.meta.url));
  return spawn(process.execPath, ['--import', 'tsx', file, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
}

/** Resolve with the first stdout line that satisfies `match`, or reject when the process exits first. */
export function waitForLine(child: ChildProcessWithoutNullStreams, match: (line: string) => boolean): Promise<string> {
  return new Promise((resolve, reject) => {
    let buffer = '';
    let stderr = '';
    const onData = (chunk: Buffer) => {
      buffer += chunk.toString();
      const lines = buffer.split('\n');
      buffer = lines.pop() ?? '';
      for (const line of lines) {
        if (match(line)) {
          child.stdout.off('data', onData);
          resolve(line);
          return;
        }
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.once('exit', (code) =>
      reject(new Error(`process exited (${code}) before the expected line; stderr: ${stderr}`)),
    );
  });
}
