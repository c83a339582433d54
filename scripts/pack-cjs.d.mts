// Types of scripts/pack-cjs.mjs (plain JavaScript: it runs before anything is built), for the tests.
export declare const PACK_LAYOUT: number;
export declare const PACKED: string[];
export declare function packDir(outRoot: string, name: string): string;
export declare function packCjs(root: string, outRoot: string, name: string): { files: number; bytes: number; entries: number };
export declare function packFresh(root: string, outRoot: string, name: string): boolean;
export declare function ensurePacks(root: string, outRoot?: string, names?: readonly string[]): string[];
