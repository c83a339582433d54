/*
 * ISO BMFF (ISO/IEC 14496-12) box writers for the CMAF init segment: ftyp and a moov with one
 * trak per track (avc1 + avcC for H.264, mp4a + esds for AAC) and an mvex saying the samples
 * come in movie fragments. Pure: Buffers in, Buffers out.
 */
import type { Fmp4Track } from './fmp4-track.ts';

/** A box: 32-bit size, four-character type, then the payload parts. */
export function box(type: string, ...parts: Buffer[]): Buffer {
  let size = 8;
  for (const p of parts) size += p.length;
  const head = Buffer.allocUnsafe(8);
  head.writeUInt32BE(size, 0);
  head.write(type, 4, 4, 'latin1');
  return Buffer.concat([head, ...parts], size);
}

/** A full box: a box whose payload starts with an 8-bit version and 24-bit flags. */
export function fullBox(type: string, version: number, flags: number, ...parts: Buffer[]): Buffer {
  const vf = Buffer.allocUnsafe(4);
  vf.writeUInt32BE(((version << 24) | flags) >>> 0, 0);
  return box(type, vf, ...parts);
}

/** 32-bit big-endian words. */
function u32(...values: number[]): Buffer {
  const b = Buffer.allocUnsafe(values.length * 4);
  values.forEach((v, i) => b.writeUInt32BE(v >>> 0, i * 4));
  return b;
}

/** The unity transformation matrix of mvhd and tkhd (16.16 and 2.30 fixed point). */
const MATRIX = u32(0x10000, 0, 0, 0, 0x10000, 0, 0, 0, 0x40000000);

function ftyp(): Buffer {
  return box('ftyp', Buffer.from('iso6', 'latin1'), u32(0), Buffer.from('iso6cmfcmp41', 'latin1'));
}

function mvhd(nextTrack: number): Buffer {
  // creation, modification, timescale (ms), duration (0: fragmented), rate 1.0, volume 1.0 + reserved
  const head = u32(0, 0, 1000, 0, 0x10000, 0x01000000, 0, 0);
  return fullBox('mvhd', 0, 0, head, MATRIX, Buffer.alloc(24), u32(nextTrack));
}

function tkhd(t: Fmp4Track): Buffer {
  // creation, modification, track_ID, reserved, duration, reserved x2, layer/alternate_group, volume/reserved
  const audio = t.kind === 'audio';
  const head = u32(0, 0, t.id, 0, 0, 0, 0, 0, audio ? 0x01000000 : 0);
  const size = audio ? u32(0, 0) : u32(t.width * 0x10000, t.height * 0x10000);
  return fullBox('tkhd', 0, 3, head, MATRIX, size);
}

function mdia(t: Fmp4Track): Buffer {
  const mdhd = fullBox('mdhd', 0, 0, u32(0, 0, t.timescale, 0), Buffer.from([0x55, 0xc4, 0, 0]));
  const handler = t.kind === 'audio' ? 'soun' : 'vide';
  const name = Buffer.from(t.kind === 'audio' ? 'SoundHandler\0' : 'VideoHandler\0', 'latin1');
  const hdlr = fullBox('hdlr', 0, 0, u32(0), Buffer.from(handler, 'latin1'), u32(0, 0, 0), name);
  const header = t.kind === 'audio' ? fullBox('smhd', 0, 0, u32(0)) : fullBox('vmhd', 0, 1, u32(0, 0));
  const dinf = box('dinf', fullBox('dref', 0, 0, u32(1), fullBox('url ', 0, 1)));
  const empty = (type: string, words: number): Buffer => fullBox(type, 0, 0, u32(...new Array<number>(words).fill(0)));
  const stbl = box('stbl', fullBox('stsd', 0, 0, u32(1), sampleEntry(t)), empty('stts', 1), empty('stsc', 1), empty('stsz', 2), empty('stco', 1));
  return box('mdia', mdhd, hdlr, box('minf', header, dinf, stbl));
}

function sampleEntry(t: Fmp4Track): Buffer {
  // six reserved bytes and data_reference_index 1
  const head = Buffer.from([0, 0, 0, 0, 0, 0, 0, 1]);
  if (t.kind === 'video') {
    const visual = Buffer.alloc(70);
    visual.writeUInt16BE(t.width, 16);
    visual.writeUInt16BE(t.height, 18);
    visual.writeUInt32BE(0x00480000, 20); // 72 dpi horizontally
    visual.writeUInt32BE(0x00480000, 24); // and vertically
    visual.writeUInt16BE(1, 32); // frame_count
    visual.writeUInt16BE(0x18, 66); // depth: colour, no alpha
    visual.writeInt16BE(-1, 68); // pre_defined
    return box('avc1', head, visual, box('avcC', t.config));
  }
  const audio = Buffer.alloc(20);
  audio.writeUInt16BE(t.channels, 8);
  audio.writeUInt16BE(16, 10); // samplesize
  audio.writeUInt32BE(t.timescale < 0x10000 ? t.timescale * 0x10000 : 0, 16);
  return box('mp4a', head, audio, esds(t.config));
}

/** An MPEG-4 descriptor (ISO/IEC 14496-1): tag, size in 7-bit groups, payload. */
function descriptor(tag: number, ...parts: Buffer[]): Buffer {
  const payload = Buffer.concat(parts);
  const size: number[] = [payload.length & 0x7f];
  for (let rest = payload.length >> 7; rest > 0; rest >>= 7) size.unshift(0x80 | (rest & 0x7f));
  return Buffer.concat([Buffer.from([tag, ...size]), payload]);
}

function esds(asc: Buffer): Buffer {
  // DecoderConfigDescriptor: objectTypeIndication 0x40 (MPEG-4 audio), streamType 5 (audio) << 2 | 1,
  // bufferSizeDB, maxBitrate and avgBitrate left 0 (unknown)
  const config = descriptor(4, Buffer.from([0x40, 0x15, 0, 0, 0]), u32(0, 0), descriptor(5, asc));
  const es = descriptor(3, Buffer.from([0, 0, 0]), config, descriptor(6, Buffer.from([2])));
  return fullBox('esds', 0, 0, es);
}

function trex(t: Fmp4Track): Buffer {
  // track_ID, default sample description 1, default duration, size, flags (set per sample in trun)
  return fullBox('trex', 0, 0, u32(t.id, 1, 0, 0, 0));
}

/** The init segment (ftyp + moov) of `tracks` (track ids unique, in the order given). */
export function writeInit(tracks: readonly Fmp4Track[]): Buffer {
  const next = Math.max(0, ...tracks.map((t) => t.id)) + 1;
  const traks = tracks.map((t) => box('trak', tkhd(t), mdia(t)));
  const mvex = box('mvex', ...tracks.map(trex));
  return Buffer.concat([ftyp(), box('moov', mvhd(next), ...traks, mvex)]);
}
