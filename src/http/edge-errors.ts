/**
 * Answers for what never reaches a route: a URL that cannot be decoded or whose parameter is too long (Fastify's
 * `frameworkErrors`), and a request Node's HTTP parser refuses (`clientErrorHandler`: a malformed request line, a
 * head over the size limit, bytes after a body that are not a request). Every response a client can cause is problem
 * details with the security headers, whatever layer produces it.
 */
import type { Socket } from 'node:net';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { problem, type ProblemCode, statusTitle } from '../platform/problems.js';
import { sendError } from './errors.js';
import { SECURITY_HEADERS } from './security-headers.js';

/** Fastify's `frameworkErrors`: the route lookup itself failed. */
export function frameworkError(error: Error & { code?: string }, request: FastifyRequest, reply: FastifyReply) {
  // No route context, so no onSend hook: the headers are set here.
  reply.headers(SECURITY_HEADERS);
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') {
    return sendError(request, reply, { status: 414, code: 'URI_TOO_LONG', detail: 'A path parameter is longer than 200 characters.' });
  }
  return sendError(request, reply, { status: 400, code: 'BAD_REQUEST', detail: 'The URL is not valid: it has malformed percent-encoding.' });
}

const CLIENT_ERRORS: Record<string, { status: number; code: ProblemCode; detail: string }> = {
  HPE_HEADER_OVERFLOW: { status: 431, code: 'HEADERS_TOO_LARGE', detail: 'The request head is larger than 16 KiB.' },
  ERR_HTTP_REQUEST_TIMEOUT: { status: 408, code: 'REQUEST_TIMEOUT', detail: 'The request was not received in time.' },
};

/**
 * Node's `clientError`: the connection is answered once with a problem and closed, so that whatever follows (for
 * instance the surplus of a body longer than its Content-Length) is never parsed as another request.
 */
export function clientErrorHandler(error: Error & { code?: string }, socket: Socket) {
  if (!socket.writable || error.code === 'ECONNRESET') {
    socket.destroy();
    return;
  }
  const known = (error.code && CLIENT_ERRORS[error.code]) || {
    status: 400,
    code: 'BAD_REQUEST' as ProblemCode,
    detail: 'The request could not be parsed as HTTP.',
  };
  const body = JSON.stringify(problem(known.status, known.code, known.detail, '/'));
  const headers = {
    ...SECURITY_HEADERS,
    'Content-Type': 'application/problem+json',
    'Content-Length': String(Buffer.byteLength(body)),
    Connection: 'close',
  };
  const head = Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  socket.end(`HTTP/1.1 ${known.status} ${statusTitle(known.status)}\r\n${head}\r\n${body}`);
}
