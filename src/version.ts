import { readFileSync } from 'node:fs';

/** The package version, for the User-Agent of deliveries and the OpenAPI document. */
export const VERSION: string = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;
