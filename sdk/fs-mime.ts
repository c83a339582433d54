import { readFileSync } from 'node:fs';
import { fsExtension } from './fs-path.ts';

/**
 * The table the reference's shipped `mime.types` holds (section 11.3), plus the streaming
 * formats players ask for. Used when `storage.mimetypes_file` is empty.
 */
const BUILTIN: Record<string, string> = {
  '.txt': 'text/plain', '.htm': 'text/html', '.html': 'text/html', '.js': 'text/javascript',
  '.mjs': 'text/javascript', '.css': 'text/css', '.json': 'application/json',
  '.m3u8': 'application/vnd.apple.mpegurl', '.m3u': 'audio/x-mpegurl', '.mpd': 'application/dash+xml',
  '.xml': 'application/xml', '.ts': 'video/MP2T', '.m4s': 'video/iso.segment', '.mp4': 'video/mp4',
  '.m4a': 'audio/mp4', '.m4v': 'video/mp4', '.aac': 'audio/aac', '.mp3': 'audio/mpeg', '.ogg': 'audio/ogg',
  '.webm': 'video/webm', '.mkv': 'video/x-matroska', '.flv': 'video/x-flv', '.wav': 'audio/wav',
  '.jpg': 'image/jpeg', '.jpeg': 'image/jpeg', '.png': 'image/png', '.gif': 'image/gif', '.webp': 'image/webp',
  '.svg': 'image/svg+xml', '.ico': 'image/vnd.microsoft.icon', '.vtt': 'text/vtt', '.pdf': 'application/pdf',
  '.ttf': 'font/ttf', '.woff': 'font/woff', '.woff2': 'font/woff2', '.wasm': 'application/wasm',
};

/**
 * Content types by file extension.
 *
 * @example
 * MimeTable.builtin().lookup('/live/x.m3u8'); // 'application/vnd.apple.mpegurl'
 */
export class MimeTable {
  readonly #types: Map<string, string>;

  constructor(types: Record<string, string>) {
    this.#types = new Map(Object.entries(types));
  }

  /** The built-in table. */
  static builtin(): MimeTable {
    return new MimeTable(BUILTIN);
  }

  /**
   * Reads a `mime.types` file ("type ext1 ext2 ...", extensions with or without the dot, `#`
   * comments). An empty `file` gives the built-in table; an unreadable one an empty table (every
   * file then gets its mount's default type, as the reference says).
   *
   * @example
   * const mime = MimeTable.load(ctx.sections.storage.mimetypes_file);
   */
  static load(file: string): MimeTable {
    if (!file) return MimeTable.builtin();
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      return new MimeTable({});
    }
    const types: Record<string, string> = {};
    for (const line of text.split('\n')) {
      const [type, ...exts] = line.replace(/#.*/, '').trim().split(/\s+/);
      if (!type || !type.includes('/')) continue;
      for (const e of exts) if (e) types[(e.startsWith('.') ? e : `.${e}`).toLowerCase()] = type;
    }
    return new MimeTable(types);
  }

  /** The type for a path's extension, or undefined. */
  lookup(path: string): string | undefined {
    const ext = fsExtension(path);
    return ext ? this.#types.get(ext) : undefined;
  }
}

const COMPRESSIBLE = [
  'text/plain', 'text/html', 'text/javascript', 'application/json', 'application/x-mpegurl',
  'application/vnd.apple.mpegurl', 'image/svg+xml',
];

/**
 * Whether the reference gzips this type on filesystem routes (section 2.5).
 *
 * @example
 * isCompressible('application/vnd.apple.mpegurl'); // true
 */
export function isCompressible(type: string): boolean {
  const t = type.toLowerCase();
  return COMPRESSIBLE.some((c) => t.includes(c));
}
