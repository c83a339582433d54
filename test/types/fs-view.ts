/**
 * Type tests of a mount's view module (issue 47.2): `FsPublicMount.view` names it, its factory
 * (`FsViewFactory`, the toolkit) gets the thread's copy and answers a node, nothing or a promise,
 * and the store hears it through `fromView`. Checked by `tsc -p test/types`; nothing here runs.
 */
import type { FilesystemService, FsNode, FsPublicMount } from '@media-core/sdk';
import type { FsViewFactory } from '@media-core/sdk/toolkit';

/** True only when A and B are the same type (not merely assignable either way). */
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false;
function check<T extends true>(): T | void {}

const mount: FsPublicMount = { defaultType: 'application/octet-stream', asks: true, view: { url: 'file:///view.js', init: { token: '' } } };
void mount;
// @ts-expect-error the view is a module's URL and its init, not a function
const wrong: FsPublicMount = { defaultType: 'text/plain', view: () => undefined };
void wrong;

const factory: FsViewFactory = (_init, ctx) => ({
  open(path, ask) {
    check<Equal<typeof ask.remote, string | undefined>>();
    const file = ctx.get(path);
    if (file) return { kind: 'file', path, file } satisfies FsNode;
    if (ask.query === 'hold') return new Promise<FsNode | undefined>((resolve) => ctx.onChange((p) => { if (p === path) resolve(undefined); }));
    ctx.send({ want: path });
    return undefined;
  },
});
void factory;

declare const fs: FilesystemService;
check<Equal<typeof fs.fromView, ((message: unknown) => void) | undefined>>();
