import type { TestApp } from '../setup/test-app.js';

/** Listens on a free local port (SSE needs a real socket: `inject` waits for the whole answer); the base URL. */
export async function listenLocally(t: TestApp): Promise<string> {
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const address = t.app.server.address();
  return `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
}

/**
 * Opens an event stream and reads it until `until(text)`, its end (`ended`), or `ms` (a bound for a failing run,
 * never reached by a passing one). `onOpen` runs once the stream says `connected`.
 */
export async function readEvents(url: string, headers: Record<string, string>, until: (text: string) => boolean, onOpen?: () => Promise<void>, ms = 10_000) {
  const abort = new AbortController();
  const res = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: abort.signal });
  const deadline = new Promise<'deadline'>((resolve) => setTimeout(() => resolve('deadline'), ms).unref());
  let text = '';
  let ended = false;
  if (res.body) {
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    let opened = false;
    for (;;) {
      const chunk = await Promise.race([reader.read(), deadline]);
      if (chunk === 'deadline') break;
      if (chunk.done) {
        ended = true;
        break;
      }
      text += decoder.decode(chunk.value, { stream: true });
      if (!opened && text.includes('event: connected')) {
        opened = true;
        await onOpen?.();
      }
      if (until(text)) break;
    }
  }
  abort.abort();
  return { status: res.status, contentType: res.headers.get('content-type'), text, ended };
}
