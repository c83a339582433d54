import type { Readable } from 'node:stream';
import type { ChildrenService } from '../../sdk/index.ts';

/** A cut's TS bytes remuxed to fragmented MP4 by a confined ffmpeg (`-c copy`): stdin TS, stdout MP4. */
export interface Mp4Job {
  out: Readable;
  /** Ends ffmpeg (the client left or the cut failed). */
  kill(): void;
}

/**
 * Fragmented MP4 (`empty_moov`, one fragment per keyframe) so it can be written to a pipe and
 * played by browsers as it arrives. Timestamps start at 0 (ffmpeg's default offset without `-copyts`).
 */
export function toMp4(children: ChildrenService, binary: string, ts: AsyncIterable<Buffer>, aac: boolean, timeoutMs: number): Mp4Job {
  const child = children.spawn(binary, [
    '-hide_banner', '-loglevel', 'error', '-f', 'mpegts', '-i', 'pipe:0', '-map', '0', '-c', 'copy',
    ...(aac ? ['-bsf:a', 'aac_adtstoasc'] : []),
    '-movflags', 'frag_keyframe+empty_moov+default_base_moof', '-f', 'mp4', 'pipe:1',
  ], { stdio: ['pipe', 'pipe', 'ignore'] });
  const kill = () => { if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL'); };
  const timer = setTimeout(kill, timeoutMs);
  timer.unref();
  child.on('close', () => clearTimeout(timer));
  child.on('error', () => { clearTimeout(timer); child.stdout?.destroy(); });
  const stdin = child.stdin!;
  stdin.on('error', () => { /* ffmpeg may stop reading early */ });
  void (async () => {
    try {
      for await (const b of ts) {
        if (!stdin.write(b)) await new Promise<void>((r) => { stdin.once('drain', r); child.once('close', r); });
        if (child.exitCode !== null || child.signalCode !== null) return;
      }
    } catch {
      kill();
    } finally {
      stdin.end();
    }
  })();
  return { out: child.stdout!, kill };
}
