/**
 * The SDK's identity. A plugin declares the SDK versions it was written for as a semver range
 * (`sdkVersion` in its definition, or a `peerDependencies` entry on `SDK_NAME` in its package);
 * the loader refuses to boot a plugin whose range this version does not satisfy. The number
 * follows the contract (refs, hooks, errors, `definePlugin`): a breaking change there bumps the
 * major. `sdk/package.json` carries the same number (a test keeps them equal).
 */

/**
 * The SDK's package name, as plugins import it.
 *
 * @example
 * import { definePlugin } from '@media-core/sdk'; // SDK_NAME
 */
export const SDK_NAME = '@media-core/sdk';

/**
 * The SDK's version (semver).
 *
 * @example
 * ctx.log.info({ sdk: SDK_VERSION }, 'mounted');
 */
export const SDK_VERSION = '4.0.0';
