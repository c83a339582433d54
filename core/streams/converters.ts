import type { StreamFormat, StreamPacket } from '../../sdk/index.ts';

/*
 * Format converters of the stream table: one per stream and target format, made on the first
 * reader of that format and shared by all of them. A converter is pure (bytes in, packets out);
 * whatever it throws ends that conversion (its readers are dropped), never the publisher.
 */

/** Turns one packet of format `From` into zero or more packets of format `To`. */
export interface StreamConverter<From extends StreamFormat, To extends StreamFormat> {
  push(packet: StreamPacket<From>): readonly StreamPacket<To>[];
}

/** The converters the table may make, by `from->to`; a missing entry refuses such readers. */
export interface ConverterRegistry {
  'flv->mpegts'?: () => StreamConverter<'flv', 'mpegts'>;
  'mpegts->flv'?: () => StreamConverter<'mpegts', 'flv'>;
}

export type ConversionKey = keyof ConverterRegistry;

export function conversionKey(from: StreamFormat, to: StreamFormat): ConversionKey {
  return `${from}->${to}` as ConversionKey;
}
