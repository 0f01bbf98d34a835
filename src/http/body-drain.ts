import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

/** How much of a refused body is read and thrown away so that its sender can read the refusal. */
export const DRAIN_LIMITS = { bytes: 64 * 1024 * 1024, ms: 10_000 };

const drained = new WeakSet<object>();

/**
 * A JSON or form body refused by the body limit (413) while it is still arriving: Fastify closes the connection at
 * once, which resets it under a client that is still writing, and the reset usually destroys the answer before the
 * client reads it. Instead the rest of the body is read and discarded, up to DRAIN_LIMITS, and the connection is
 * closed only when it has ended or passed the limits. Uploads refused while streaming keep their immediate close
 * (src/http/uploads.ts): reading a refused gigabyte is what they avoid.
 */
export const bodyDrainPlugin = fp(
  async (app: FastifyInstance) => {
    app.addHook('onError', async (request, _reply, error) => {
      if ((error as { code?: string }).code === 'FST_ERR_CTP_BODY_TOO_LARGE') drained.add(request.raw);
    });
    app.addHook('onSend', (request, reply, payload, done) => {
      const raw = request.raw;
      if (!drained.has(raw) || raw.complete || raw.readableEnded) return done(null, payload);
      reply.removeHeader('connection');
      let read = 0;
      const socket = raw.socket;
      const cut = () => (typeof socket?.destroy === 'function' ? socket.destroy() : undefined);
      const timer = setTimeout(cut, DRAIN_LIMITS.ms);
      timer.unref();
      raw.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read > DRAIN_LIMITS.bytes) cut();
      });
      raw.once('end', () => clearTimeout(timer));
      raw.once('close', () => clearTimeout(timer));
      raw.resume();
      done(null, payload);
    });
  },
  { name: 'body-drain' },
);
