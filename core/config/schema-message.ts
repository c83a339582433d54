import { FormatRegistry } from '@sinclair/typebox';
import type { ValueError } from '@sinclair/typebox/value';
import { CONFIG_FORMATS, formatMessage } from '../../sdk/config/formats.ts';

// the SDK registers its formats with the TypeBox it resolves; an installed core may resolve its own
// copy (the checks below run with that one), so they are registered here too
for (const [name, f] of Object.entries(CONFIG_FORMATS)) if (!FormatRegistry.Has(name)) FormatRegistry.Set(name, f.test);

/**
 * The message of one schema error: for a value not of its config format, the value and the form
 * the key expects (`'127.0.0.1:5000' is not an IP address ...`); otherwise TypeBox's own.
 */
export function schemaErrorMessage(e: ValueError): string {
  const format = (e.schema as { format?: string }).format;
  return (typeof e.value === 'string' && formatMessage(format, e.value)) || e.message;
}
