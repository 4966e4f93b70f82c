// The proof-of-work solver, run in a Web Worker so that the page stays responsive. It takes
// a challenge in the ALTCHA format and searches its numbers with ALTCHA's own solver, a
// slice at a time, reporting after each slice how far it got.
import { solveChallenge } from "altcha-lib/v1";

/** What the page asks: the challenge's fields. */
export interface SolveRequest {
  algorithm: string;
  challenge: string;
  salt: string;
  maxnumber: number;
}

/** What the worker answers: progress (0–1) while it searches, then the number or null. */
export type SolveMessage = { progress: number } | { number: number | null };

/** Slices: enough for a smooth progress bar, few enough that the bookkeeping costs nothing. */
const slices = 50;

const scope = self as unknown as {
  onmessage: ((e: MessageEvent<SolveRequest>) => void) | null;
  postMessage(m: SolveMessage): void;
};

scope.onmessage = async (e) => {
  const { algorithm, challenge, salt, maxnumber } = e.data;
  const step = Math.max(1000, Math.ceil(maxnumber / slices));
  for (let start = 0; start <= maxnumber; start += step) {
    const end = Math.min(maxnumber, start + step - 1);
    const found = await solveChallenge(challenge, salt, algorithm, end, start).promise;
    if (found) {
      scope.postMessage({ number: found.number });
      return;
    }
    scope.postMessage({ progress: (end + 1) / (maxnumber + 1) });
  }
  scope.postMessage({ number: null });
};
