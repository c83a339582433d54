/**
 * Type tests of the SDK's public types (issue 30): what `definePlugin` infers for a plugin's
 * config, deps and sections, and what it refuses. Checked by `tsc -p test/types`
 * (test/sdk/types.test.ts); nothing here runs. Each `@ts-expect-error` line must fail to
 * type-check, so an inference that widens to `unknown`/`any` breaks the suite twice: the
 * `Equal` checks fail and the expected errors go missing.
 */
import { Type } from '@sinclair/typebox';
import { createServiceRef, definePlugin, optional, type PluginDefinition } from '@media-core/sdk';

/** True only when A and B are the same type (not merely assignable either way). */
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false;
/** Compiles only for `true`. */
function check<T extends true>(): T | void {}

interface Clock { now(): number }
const clockRef = createServiceRef<Clock>('types.clock');
const volumesRef = createServiceRef<{ id: string }, true>('types.volumes', { multiple: true });

const Settings = Type.Object({ port: Type.Integer(), label: Type.Optional(Type.String()) });

export const typed = definePlugin({
  name: 'typed',
  configSchema: Settings,
  deps: { clock: clockRef, volumes: volumesRef, maybe: optional(clockRef) },
  reads: ['db', 'address'],
  validate: (section) => {
    check<Equal<typeof section, { port: number; label?: string }>>();
    const errors: Record<string, string[]> = {};
    if (section.port <= 0) errors.port = ['must be positive'];
    return errors;
  },
  setup(ctx) {
    // config: the schema's static type
    check<Equal<typeof ctx.config, { port: number; label?: string }>>();
    // @ts-expect-error a key the schema does not have
    void ctx.config.prot;
    // @ts-expect-error a number is no string
    const label: string = ctx.config.port;
    void label;

    // deps: one provider is the service, a multiple ref an array, an optional one may be missing
    check<Equal<typeof ctx.deps.clock, Clock>>();
    check<Equal<typeof ctx.deps.volumes, readonly { id: string }[]>>();
    check<Equal<typeof ctx.deps.maybe, Clock | undefined>>();
    // @ts-expect-error an optional dep may be undefined
    ctx.deps.maybe.now();
    // @ts-expect-error a dep the definition does not name
    void ctx.deps.other;
    // @ts-expect-error deps are read-only
    ctx.deps.clock = { now: () => 0 };

    // sections: exactly those in `reads`, typed, deeply read-only
    check<Equal<keyof typeof ctx.sections, 'db' | 'address'>>();
    check<Equal<typeof ctx.sections.address, string>>();
    const dir: string = ctx.sections.db.dir;
    void dir;
    // @ts-expect-error a section not in `reads`
    void ctx.sections.storage;
    // @ts-expect-error sections are frozen
    ctx.sections.db.dir = '/elsewhere';

    // provide: the implementation must fit the ref
    ctx.provide(clockRef, { now: () => 1 });
    // @ts-expect-error the wrong service for the ref
    ctx.provide(clockRef, { now: () => 'noon' });
  },
});
// the definition keeps its parameters: another plugin or a test sees the same types
check<Equal<typeof typed, PluginDefinition<typeof Settings, { clock: typeof clockRef; volumes: typeof volumesRef; maybe: ReturnType<typeof optional<Clock>> }, readonly ['db', 'address']>>>();

export const bare = definePlugin({
  name: 'bare',
  setup(ctx) {
    // no schema: no config of its own; no deps, no sections
    check<Equal<typeof ctx.config, undefined>>();
    // @ts-expect-error no deps declared
    void ctx.deps.clock;
    // @ts-expect-error no sections declared
    void ctx.sections.db;
  },
});

// `reads` names top-level sections only, and never `plugins`
// @ts-expect-error not a section
definePlugin({ name: 'bad-read', reads: ['nope'], setup() {} });
// @ts-expect-error the plugin list is the kernel's
definePlugin({ name: 'bad-plugins', reads: ['plugins'], setup() {} });
// @ts-expect-error deps are refs, not names
definePlugin({ name: 'bad-dep', deps: { clock: 'types.clock' }, setup() {} });
// @ts-expect-error validate gets the schema's type: `port` is a number
definePlugin({ name: 'bad-validate', configSchema: Settings, validate: (s) => (s.port.length ? {} : {}), setup() {} });
// @ts-expect-error a name is required
definePlugin({ setup() {} });

// `events` declares the types a plugin emits: listed under its name, so a declaration has no emitter
definePlugin({ name: 'emits', events: [{ type: 'vendor.hot', description: 'Too hot.', subject: ['card'], payload: { celsius: 'temperature' } }], setup() {} });
// @ts-expect-error a declaration says when it is emitted
definePlugin({ name: 'bad-events', events: [{ type: 'vendor.hot', subject: [], payload: {} }], setup() {} });
