import { ApiError } from '../../sdk/index.ts';
import type { LaddersService } from '../ladders/api.ts';

/**
 * The stream a WHEP viewer of `stream` plays when the stream has an adaptive-bitrate ladder (the
 * `ladders` plugin): `?rendition=<rung>` asks for one of its renditions (`720p`: the table's
 * `<stream>/720p`), `?rendition=source` for the stream itself; without the query, the top rung (the
 * stream itself when that rung copies the source's video: the same picture without starting the
 * ladder). A stream without a ladder plays as it is; asking it for a rendition other than `source`
 * is 404 `WEBRTC_NO_RENDITION`, as is a rung its ladder does not have.
 */
export function renditionFor(stream: string, asked: unknown, ladders: LaddersService | undefined): string {
  const rungs = ladders?.renditionsOf(stream);
  if (asked === undefined || asked === '') {
    const top = rungs?.[0];
    return top === undefined || top.copy ? stream : top.name;
  }
  if (asked === 'source') return stream;
  const r = typeof asked === 'string' ? rungs?.find((x) => x.rung === asked) : undefined;
  if (!r) {
    const have = rungs ? `its renditions: ${['source', ...rungs.map((x) => x.rung)].join(', ')}` : 'it has no ladder';
    throw new ApiError(404, 'Not Found', [`stream ${stream} has no rendition ${JSON.stringify(String(asked).slice(0, 40))} (${have})`], 'WEBRTC_NO_RENDITION');
  }
  return r.name;
}
