/**
 * One recorded attempt as a curl command (POSIX shell), to send the same request again by hand: the URL, the headers
 * as recorded (the signatures among them; the secret is never in them, so never in the command) and the exact body.
 * Every argument is single-quoted, so nothing in a URL, a header or the payload is read by the shell.
 */
export function curlCommand(url: string, headers: Readonly<Record<string, string>>, body: string): string {
  const lines = [`curl -sS -X POST ${quote(url)}`];
  for (const [name, value] of Object.entries(headers)) lines.push(`-H ${quote(`${name}: ${value}`)}`);
  // --data-binary sends the bytes as given (--data would strip line breaks; the payload is compact JSON anyway).
  lines.push(`--data-binary ${quote(body)}`);
  return lines.join(' \\\n  ');
}

/** `it's` → `'it'\''s'`: a single-quoted shell word holding exactly `text`. */
export function quote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}
