import { LineSplitter } from './supervisor/index.ts';
import { directSpawn, type Spawn } from './run-collect.ts';

/** Reference 7.9: the probe ends at the latest after this long (the original's stale timeout). */
const PROBE_TIMEOUT_MS = 20_000;

/**
 * Runs the encoder with the global options and the inputs only (no outputs) and returns every
 * stderr line. The encoder then complains that no output is given, after printing what it
 * found in the inputs, which is what the probe parser reads.
 */
export function runProbe(binary: string, args: readonly string[], signal?: AbortSignal, timeoutMs = PROBE_TIMEOUT_MS, run: Spawn = directSpawn): Promise<string[]> {
  return new Promise((resolve) => {
    const lines: string[] = [];
    const splitter = new LineSplitter((l) => lines.push(l));
    let child;
    try {
      // the signal ends a probe still running when the app closes
      child = run(binary, args, { stdio: ['ignore', 'ignore', 'pipe'], env: {}, signal, killSignal: 'SIGKILL' });
    } catch (err) {
      resolve([`cannot run ${binary}: ${(err as Error).message}`]);
      return;
    }
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (chunk: string) => splitter.push(chunk));
    child.on('error', (err) => { if (err.name !== 'AbortError') lines.push(`cannot run ${binary}: ${err.message}`); });
    child.on('close', () => {
      clearTimeout(timer);
      splitter.end();
      resolve(lines);
    });
  });
}
