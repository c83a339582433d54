import { Type, type ObjectOptions, type TObject, type TSchema } from '@sinclair/typebox';

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

/** One key of a `section`: its schema with the text the docs show for it, or its schema alone. */
export type SectionKey = TSchema | readonly [TSchema, string];

/** The schemas of a `section`'s keys, descriptions set. */
export type SectionProps<K extends Record<string, SectionKey>> = {
  -readonly [P in keyof K]: K[P] extends readonly [infer S extends TSchema, string] ? S : K[P] extends TSchema ? K[P] : never;
};

/**
 * A config section: every key written once, its schema next to its description (the text
 * `sample-config/README.md` shows), the section defaulting to `{}` (each key has its default), so a
 * config without the section loads. A nested section is a `section` too.
 *
 * @example
 * export const PlayoutConfig = section({
 *   enable: [Bool(false), 'Read `playout:` inputs through a relay (plugin `playout`).'],
 *   min_port: [Port(0), 'Lowest loopback TCP port of the relays.'],
 * });
 */
export function section<const K extends Record<string, SectionKey>>(keys: K, options: ObjectOptions = { default: {} }): TObject<SectionProps<K>> {
  const props: Record<string, TSchema> = {};
  for (const [name, key] of Object.entries(keys)) {
    if (!Array.isArray(key)) { props[name] = key as TSchema; continue; }
    const [schema, text] = key as readonly [TSchema, string];
    schema.description = text;
    props[name] = schema;
  }
  return Type.Object(props, options) as TObject<SectionProps<K>>;
}
