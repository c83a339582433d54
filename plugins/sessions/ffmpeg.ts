import { processHooksRef, type PluginHooks, type ProcessesService } from '../../sdk/index.ts';
import type { Collector } from './collector.ts';

/** Addresses that leave the machine (files, pipes and `{memfs}`/`{diskfs}` placeholders do not). */
const NETWORK = /^(rtmps?|rtmpt|srt|udp|tcp|rtp|rtsps?|https?|icecast):\/\//i;

/**
 * The `ffmpeg` collector: a session per process running with a network output (id = process id),
 * egress = the growth of its output size; no ingress (the progress has no per-input bytes).
 */
export function tapFfmpeg(hooks: PluginHooks, processes: ProcessesService, ffmpeg: Collector): void {
  const sizes = new Map<string, number>();
  hooks.tap(processHooksRef, 'onStateChange', async (ev) => {
    if (ev.to === 'running') {
      const p = processes.get(ev.id);
      if (!p || !p.outputs.some((o) => NETWORK.test(o.address))) return;
      ffmpeg.register(ev.id, { reference: ev.reference }, true);
      sizes.set(ev.id, 0);
    } else if (ev.from === 'running') {
      ffmpeg.close(ev.id);
      sizes.delete(ev.id);
    }
  });
  hooks.tap(processHooksRef, 'onProgress', async (ev) => {
    const before = sizes.get(ev.id);
    if (before === undefined) return;
    const now = ev.progress.sizeKb * 1024;
    if (now > before) ffmpeg.egress(ev.id, now - before);
    sizes.set(ev.id, now);
  });
}
