/*
 * The DVR playlist of a stream (`dvr.m3u8`): its recording (the `recordings` plugin) over the last
 * `windowMs`, a sliding window of its segments by their public URLs, ended once it stops.
 */
import type { FsNode } from '../../sdk/index.ts';
import type { RecordingsService } from '../recordings/api.ts';
import { digest, NO_CACHE, playlistFile } from './answers.ts';

export class DvrPlaylists {
  /** The last answer of each stream, while its text is the same. */
  #kept = new Map<string, { text: string; node: FsNode }>();
  #max: number;

  /** `max`: streams whose last answer is kept (all forgotten beyond). */
  constructor(max: number) {
    this.#max = max;
  }

  /** `name`'s DVR playlist from `now - windowMs`, or undefined when it has no recording. */
  answer(recs: RecordingsService | undefined, name: string, now: number, windowMs: number): FsNode | undefined {
    const rec = recs?.ofStream(name)[0];
    if (!recs || rec === undefined) return undefined;
    const p = recs.playlist(rec, { kind: 'live', from: now - windowMs });
    if (!p.ok) return undefined;
    // the recordings give the same text while the window names the same segments: its answer is kept
    let kept = this.#kept.get(name);
    if (kept?.text !== p.text) {
      const data = Buffer.from(p.text);
      kept = { text: p.text, node: { kind: 'file', path: `/${name}/dvr.m3u8`, file: playlistFile(data, `"dvr-${digest(data)}"`, now, NO_CACHE) } };
      if (this.#kept.size >= this.#max) this.#kept.clear();
      this.#kept.set(name, kept);
    }
    return kept.node;
  }
}
