import type { InStream } from './io.js';

/** All of stdin as text (for secrets and request bodies piped in by scripts). */
export async function readAll(stream: InStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}
