import type { TSchema } from '@sinclair/typebox';

/**
 * Sets the `description` of nested keys of a freshly built object schema, by dotted path. The
 * descriptions then live in the schema itself: `sample-config/README.md` and the OpenAPI document
 * read them from there. Throws on a path the schema lacks, so a renamed key cannot keep a stale text.
 *
 * @example
 * export const PlayoutConfig = describe(Type.Object({ enable: Bool(false) }), { enable: 'Enable playout.' });
 */
export function describe<T extends TSchema>(schema: T, texts: Record<string, string>): T {
  for (const [path, text] of Object.entries(texts)) {
    let cur: TSchema | undefined = schema;
    for (const part of path.split('.')) {
      cur = (cur as { properties?: Record<string, TSchema> } | undefined)?.properties?.[part];
    }
    if (!cur) throw new Error(`describe: no key '${path}' in the schema`);
    (cur as { description?: string }).description = text;
  }
  return schema;
}
