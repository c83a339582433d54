/** The composition package: this service's build (the core with every plugin of plugins/ built in). */
export { BUILD } from './build.ts';
export { BUILTINS } from './built-ins.ts';
export { ConfigData } from './config-data.ts';
