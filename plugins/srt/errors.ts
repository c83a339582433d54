import { BootError } from '../../sdk/index.ts';

export const FIX = 'apt-get install libsrt-openssl-dev, then scripts/ensure-deps.sh builds the addon';

/** Boot failures of the plugin, each saying how to fix it. */
export const srtErrors = {
  addon: (path: string, why: string) =>
    new BootError(`srt.enable is true but the SRT addon cannot be loaded from ${path}: ${why}. Fix: ${FIX}`),
  bind: (address: string, why: string) => new BootError(`SRT cannot listen on '${address}': ${why}`),
};
