import { Type, type Static } from '../../../sdk/index.ts';

/*
 * The playlist shapes of `/api/v3/playlist/{name}` (one schema per shape). Bounds are documented in
 * ../README.md ("Playlists").
 */

/** Most items in one playlist. */
export const MAX_ITEMS = 1000;
/** Most playlists stored. */
export const MAX_PLAYLISTS = 100;
/** A playlist name: letters, digits, `_`, `-`, `.`, 1-64 characters, not starting with `.`. */
export const NAME_PATTERN = '^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,63}$';

/** One item: a disk-fs path (relative to storage.disk.dir) or an http(s)/rtmp(s)/srt URL. */
export const PlaylistItem = Type.Object({
  source: Type.String({ minLength: 1, maxLength: 2048, description: 'disk-fs path (`/videos/a.mp4`) or http(s)/rtmp(s)/srt URL' }),
  in: Type.Optional(Type.Number({ minimum: 0, description: 'start point, seconds' })),
  out: Type.Optional(Type.Number({ exclusiveMinimum: 0, description: 'end point, seconds (after `in`)' })),
}, { additionalProperties: false });
export type PlaylistItem = Static<typeof PlaylistItem>;

/** What the items must agree on (`refuse`) or what they are encoded to (`normalise`). */
export const PlaylistFormat = Type.Object({
  width: Type.Integer({ minimum: 16, maximum: 7680, default: 1280 }),
  height: Type.Integer({ minimum: 16, maximum: 4320, default: 720 }),
  fps: Type.Integer({ minimum: 1, maximum: 120, default: 25 }),
  video_bitrate_kbit: Type.Integer({ minimum: 100, maximum: 50_000, default: 2500 }),
  audio_bitrate_kbit: Type.Integer({ minimum: 16, maximum: 512, default: 128 }),
}, { additionalProperties: false });
export type PlaylistFormat = Static<typeof PlaylistFormat>;

/** The body of `PUT /api/v3/playlist/{name}`. */
export const PlaylistBody = Type.Object({
  items: Type.Array(PlaylistItem, { maxItems: MAX_ITEMS }),
  loop: Type.Boolean({ default: true }),
  shuffle: Type.Boolean({ default: false }),
  mismatch: Type.Union([Type.Literal('refuse'), Type.Literal('normalise')], {
    default: 'normalise',
    description: '`refuse`: items whose codecs, size or frame rate differ from the first are refused (400), the stream is copied; `normalise`: every item is encoded to `format`',
  }),
  format: Type.Optional(PlaylistFormat),
}, { additionalProperties: false });
export type PlaylistBody = Static<typeof PlaylistBody>;

/** What the probe at insert found about an item (disk items; URLs in `refuse` mode). */
export const ItemMedia = Type.Object({
  video: Type.String(), width: Type.Integer(), height: Type.Integer(), fps: Type.Number(),
  audio: Type.String(), duration: Type.Number(),
});
export type ItemMedia = Static<typeof ItemMedia>;

/** A stored playlist, as `GET` answers it. */
export const Playlist = Type.Object({
  name: Type.String(),
  items: Type.Array(Type.Object({ ...PlaylistItem.properties, media: Type.Optional(ItemMedia) })),
  loop: Type.Boolean(),
  shuffle: Type.Boolean(),
  mismatch: Type.Union([Type.Literal('refuse'), Type.Literal('normalise')]),
  format: PlaylistFormat,
  updated_at: Type.Integer({ description: 'UNIX seconds of the last PUT' }),
});
export type Playlist = Static<typeof Playlist>;
export type StoredItem = Playlist['items'][number];

export const PlaylistList = Type.Array(Playlist);
export const PlaylistParams = Type.Object({ name: Type.String({ pattern: NAME_PATTERN }) });
