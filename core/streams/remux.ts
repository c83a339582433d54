import type { ConverterRegistry } from './converters.ts';

/**
 * The converters the app's stream table uses. None yet: a reader asking another format than the
 * publisher's is refused with `STREAM_FORMAT_UNAVAILABLE` ('format not available').
 */
export function converterRegistry(): ConverterRegistry {
  return {};
}
