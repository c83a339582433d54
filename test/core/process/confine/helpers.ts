import { readFileSync } from 'node:fs';
import type { Children } from '../../../../core/process/confine/children.ts';
import type { ChildSpawnOptions } from '../../../../sdk/index.ts';
import type { Requester } from '../../../helpers/app.ts';
import { waitFor } from '../../../helpers/wait.ts';

/** A short real-time-free source: one second of tiny video, so a run ends by itself. */
export const SHORT_IN = { id: 'in', address: 'testsrc2=size=64x48:rate=10:d=1', options: ['-f', 'lavfi'] };

export interface Outcome {
  /** The status of the add: 400 when the reference's checks refuse it already. */
  status: number;
  /** The last lines ffmpeg printed (empty when it was refused). */
  log: string;
}

/**
 * Adds a process that runs once (no reconnect), starts it and waits until its run has ended.
 * A refusal by the API (400) ends it at once.
 */
export async function runOnce(app: Requester, id: string, body: Record<string, unknown>): Promise<Outcome> {
  const add = await app.request('POST', '/api/v3/process', { body: { id, input: [SHORT_IN], reconnect: false, autostart: false, ...body } });
  if (add.status !== 200) return { status: add.status, log: add.text };
  const start = await app.request('PUT', `/api/v3/process/${id}/command`, { body: { command: 'start' } });
  if (start.status !== 200) throw new Error(`start ${id}: ${start.status} ${start.text}`);
  const report = await waitFor(async () => {
    const s = (await app.request('GET', `/api/v3/process/${id}/state`)).body;
    if (!['finished', 'failed', 'killed'].includes(s.exec)) return undefined;
    const r = (await app.request('GET', `/api/v3/process/${id}/report`)).body;
    return r.log.length > 0 || r.history?.length > 0 ? r : undefined;
  }, { timeout: 30_000, what: `${id}: its run to end` });
  const lines = (report.log.length ? report.log : report.history.at(-1)?.log ?? []) as [string, string][];
  return { status: 200, log: lines.map((l) => l[1]).slice(-6).join('\n') };
}

/** Alive and not a zombie waiting for its new parent to reap it. */
export function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/** Runs a shell script through the children service: its exit code and everything it printed. */
export function sh(children: Children, script: string, o: ChildSpawnOptions = {}): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = children.spawn('sh', ['-c', script], { ...o, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout!.on('data', (d: Buffer) => { out += d.toString(); });
    child.stderr!.on('data', (d: Buffer) => { out += d.toString(); });
    child.on('close', (code) => resolve({ code, out }));
  });
}
