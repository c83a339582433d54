/**
 * Type tests of `section` (issue 45.5): a config section written key by key, each key's schema
 * next to its description, infers the same static type as the `Type.Object` it builds.
 * Checked by `tsc -p test/types` (test/sdk/types.test.ts); nothing here runs.
 */
import { Bool, Formatted, Int, List, Port, section, Str, type Static } from '@media-core/sdk';

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false;
function check<T extends true>(): T | void {}

const Section = section({
  enable: [Bool(false), 'Run it.'],
  address: [Formatted('listen-address', ':1234'), 'Where it listens.'],
  port: [Port(0), 'A port.'],
  limit: [Int(5, { minimum: 1 }), 'At most this many.'],
  tags: List(),
  auth: section({ user: [Str('admin'), 'The user.'], password: Str('') }),
});
check<Equal<Static<typeof Section>, {
  enable: boolean; address: string; port: number; limit: number; tags: string[]; auth: { user: string; password: string };
}>>();

// a key is a schema, or a schema and its text: nothing else
// @ts-expect-error a bare string is not a key
section({ enable: 'Run it.' });
// @ts-expect-error the text comes after the schema
section({ enable: ['Run it.', Bool(false)] });
