import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

let cached: string | undefined;

/**
 * The player page (page/player.html): one static file, no framework, no value of the request in it
 * (it finds its WHEP endpoint and token in its own URL), so nothing a caller sends reaches its HTML.
 */
export function playerPage(): string {
  cached ??= readFileSync(fileURLToPath(new URL('./page/player.html', import.meta.url)), 'utf8');
  return cached;
}
