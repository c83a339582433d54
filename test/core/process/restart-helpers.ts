import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { request, type TestApp } from '../../helpers/app.ts';
import { waitFor } from '../../helpers/wait.ts';

const X264 = ['-c:v', 'libx264', '-preset', 'ultrafast', '-tune', 'zerolatency', '-g', '10'];

/** An HLS process from lavfi into `{memfs}` or `{diskfs}` with 1 s segments. */
export function hlsProcess(id: string, fs: 'memfs' | 'diskfs', autostart: boolean): Record<string, unknown> {
  return {
    id,
    autostart,
    reconnect: true,
    reconnect_delay_seconds: 1,
    input: [{ id: 'in', address: 'testsrc2=size=160x120:rate=10', options: ['-re', '-f', 'lavfi'] }],
    output: [{
      id: 'hls',
      address: `{${fs}}/{processid}.m3u8`,
      options: [...X264, '-f', 'hls', '-hls_time', '1', '-hls_list_size', '3',
        '-hls_segment_filename', `{${fs}}/{processid}_%04d.ts`, ...(fs === 'memfs' ? ['-method', 'PUT'] : [])],
    }],
  };
}

/** The app's API by base URL, for apps in another OS process. */
export function api(base: string): Pick<TestApp, 'request'> {
  return { request: (method, path, r) => request(base, method, path, r) };
}

export async function stateOf(app: Pick<TestApp, 'request'>, id: string): Promise<any> {
  return (await app.request('GET', `/api/v3/process/${id}/state`)).body;
}

/** Waits for a memfs segment of `id` written at or after `since` (unix seconds). */
export function freshMemSegment(app: Pick<TestApp, 'request'>, id: string, since: number): Promise<string> {
  return waitFor(async () => {
    const list = (await app.request('GET', '/api/v3/fs/mem')).body as { name: string; last_modified: number }[];
    return list.find((f) => f.name.startsWith(`/${id}_`) && f.name.endsWith('.ts') && f.last_modified >= since)?.name;
  }, { what: `a fresh memfs segment of ${id}`, timeout: 30_000 });
}

/** Waits for a disk segment of `id` modified after `sinceMs`. */
export function freshDiskSegment(dir: string, id: string, sinceMs: number): Promise<string> {
  return waitFor(() => readdirSync(dir).find((n) => n.startsWith(`${id}_`) && n.endsWith('.ts')
    && (statSync(join(dir, n), { throwIfNoEntry: false })?.mtimeMs ?? 0) > sinceMs), { what: `a fresh disk segment of ${id}`, timeout: 30_000 });
}
