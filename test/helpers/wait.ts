/**
 * Polls `fn` every 50 ms until it gives a value (anything but undefined) and returns it; throws
 * after `ms`. The one way the payouts suites wait for a condition, never for a fixed time.
 */
export async function until<T>(fn: () => Promise<T | undefined>, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
