// A typed client of otpgate's public API. The types in schema.ts are generated from
// api/openapi.yaml by openapi-typescript (`npm run generate`); requests go through
// openapi-fetch, so every path, body and answer is checked against the document at compile
// time. send and check add what every caller needs on top: the app's path, the problem of
// a refusal as a thrown ProblemError, and the ALTCHA payload of a solved challenge.
import createFetchClient from "openapi-fetch";
import type { components, paths } from "./schema.js";

export type { components, paths };

/** The body of a send: an address, and optionally a channel, a locale and a solution. */
export type SendRequest = components["schemas"]["SendRequest"];
/** The body of a check: the code and a phone, an email address or a verification id. */
export type CheckRequest = components["schemas"]["CheckRequest"];
/** A pending verification, as a send answers it. */
export type Verification = components["schemas"]["Verification"];
/** An approved check. `token`, a signed verification token, is there when the server issues them. */
export type CheckResult = components["schemas"]["CheckResult"] & { token?: string };
/** An RFC 9457 problem, with otpgate's extensions. */
export type Problem = components["schemas"]["Problem"];
/** A proof-of-work challenge in the ALTCHA format, as a `428 challenge_required` carries it. */
export type Challenge = components["schemas"]["Challenge"];

/** The default app's alias: its endpoints are also the unprefixed /v1/verifications. */
export const DEFAULT_APP = "default";

/** Options of createClient. */
export interface ClientOptions {
  /** The server's origin, such as https://otp.example.com; empty for the page's own. */
  baseUrl?: string;
  /** The app's id; "default" (the default) is the default app. */
  app?: string;
  /** Headers sent with every request. A browser never holds an app key: public apps only. */
  headers?: Record<string, string>;
  /** The fetch to use; the global one by default (tests pass their own). */
  fetch?: typeof globalThis.fetch;
}

/** A refusal of the server: the HTTP status and the problem it answered. */
export class ProblemError extends Error {
  /** The HTTP status. */
  readonly status: number;
  /** The problem document; a synthetic one with code "network" when no answer came. */
  readonly problem: Problem;

  constructor(status: number, problem: Problem) {
    super(problem.detail || problem.title || problem.code);
    this.name = "ProblemError";
    this.status = status;
    this.problem = problem;
  }

  /** The problem's stable code, such as "rate_limited". */
  get code(): string {
    return this.problem.code;
  }
}

/** What a send answered: 201 for a new verification, 200 for a resend of the pending one. */
export interface Sent {
  status: 200 | 201;
  verification: Verification;
}

/** Options of one send. */
export interface SendOptions {
  /** The Idempotency-Key header: a retry with the same key and body is answered once. */
  idempotencyKey?: string;
  /** Aborts the request. */
  signal?: AbortSignal;
}

/** The client createClient returns. */
export interface Client {
  /** Sends (or resends) a code; throws ProblemError for every refusal. */
  send(body: SendRequest, opts?: SendOptions): Promise<Sent>;
  /** Checks a code; throws ProblemError for every refusal. */
  check(body: CheckRequest, opts?: { signal?: AbortSignal }): Promise<CheckResult>;
  /** The openapi-fetch client underneath, for every other operation of the document. */
  readonly api: ReturnType<typeof createFetchClient<paths>>;
}

/** createClient returns a client of one app of one server. */
export function createClient(opts: ClientOptions = {}): Client {
  const api = createFetchClient<paths>({
    baseUrl: (opts.baseUrl || globalThis.location?.origin || "").replace(/\/+$/, ""),
    headers: opts.headers,
    // Read the global at call time, so a test or polyfill installed later is used.
    fetch: opts.fetch ?? ((req: Request) => globalThis.fetch(req)),
  });
  const app = opts.app || DEFAULT_APP;
  const params = { path: { app_id: app } };

  return {
    api,
    async send(body, o = {}) {
      const headers = o.idempotencyKey ? { "Idempotency-Key": o.idempotencyKey } : undefined;
      const r = await call(() =>
        api.POST("/v1/apps/{app_id}/verifications", { params, body, headers, signal: o.signal }),
      );
      return { status: r.response.status === 201 ? 201 : 200, verification: r.data as Verification };
    },
    async check(body, o = {}) {
      const r = await call(() =>
        api.POST("/v1/apps/{app_id}/verifications/check", { params, body, signal: o.signal }),
      );
      return r.data as CheckResult;
    },
  };
}

/** call runs one request and turns a refusal, or no answer at all, into a ProblemError. */
async function call<R extends { response: Response; data?: unknown; error?: unknown }>(
  req: () => Promise<R>,
): Promise<R> {
  let r: R;
  try {
    r = await req();
  } catch (err) {
    if (err instanceof DOMException && err.name === "AbortError") throw err;
    throw new ProblemError(0, {
      type: "urn:otpgate:problem:network",
      title: "Network error",
      status: 0 as number,
      detail: String(err),
      code: "network",
    } as Problem);
  }
  if (r.response.ok) return r;
  throw new ProblemError(r.response.status, toProblem(r.response, r.error));
}

/** toProblem reads a problem body, or makes one for an answer that is not one (a proxy's 502 page). */
function toProblem(res: Response, body: unknown): Problem {
  if (body && typeof body === "object" && typeof (body as Problem).code === "string") {
    return body as Problem;
  }
  return {
    type: "urn:otpgate:problem:http_" + res.status,
    title: res.statusText || "HTTP " + res.status,
    status: res.status,
    detail: typeof body === "string" && body ? body : "HTTP " + res.status,
    code: res.status >= 500 ? "unavailable" : "http_" + res.status,
  } as Problem;
}

/** altchaPayload is the `altcha` field of the repeated send: base64 of the solved challenge, as ALTCHA's widget encodes it. */
export function altchaPayload(c: Challenge, number: number): string {
  const json = JSON.stringify({
    algorithm: c.algorithm,
    challenge: c.challenge,
    number,
    salt: c.salt,
    signature: c.signature,
  });
  // btoa takes Latin-1; the salt is ASCII (hex and a query string), but encode as UTF-8 to be safe.
  const bytes = new TextEncoder().encode(json);
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin);
}

/** retryAfterSeconds is how long a refusal asks to wait, from its problem or 0 when it names none. */
export function retryAfterSeconds(p: Problem): number {
  return typeof p.retry_after_seconds === "number" ? p.retry_after_seconds : 0;
}
