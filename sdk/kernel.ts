import { createHooksRef, AsyncSeriesHook } from './hooks.ts';

/**
 * Hooks of the kernel's lifecycle. `onListen` runs once the HTTP listener is bound (and again
 * after a reload), e.g. to start processes whose order is `start`.
 *
 * @example
 * ctx.hooks.tap(kernelHooksRef, 'onListen', async () => { ctx.log.info('listening'); });
 */
export const kernelHooksRef = createHooksRef('kernel', () => ({
  onListen: new AsyncSeriesHook<[]>([]),
}));
