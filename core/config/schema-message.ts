import type { ValueError } from '@sinclair/typebox/value';
import { formatMessage } from '../../sdk/index.ts';

/**
 * The message of one schema error: for a value not of its config format, the value and the form
 * the key expects (`'127.0.0.1:5000' is not an IP address ...`); otherwise TypeBox's own.
 */
export function schemaErrorMessage(e: ValueError): string {
  const format = (e.schema as { format?: string }).format;
  return (typeof e.value === 'string' && formatMessage(format, e.value)) || e.message;
}
