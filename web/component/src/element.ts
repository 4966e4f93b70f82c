// <otpgate-verify>: a standard custom element that verifies a phone number (or an email
// address) with otpgate: the address, the send, the proof of work a 428 asks for, the code,
// the resend countdown, and a `verified` event with the check's answer and its token.
import { altchaPayload, createClient, ProblemError, type Challenge, type Client, type Problem, type Verification } from "@otpgate/client";
import { solveChallenge } from "altcha-lib/v1";
import type { CountryCode } from "libphonenumber-js/min";
import workerSource from "otpgate:worker";
import { clock, format, localeOf, problemKey, rtl, texts, type Texts } from "./messages.js";
import { countries, defaultCountry, display, formatTyped, isCountry, toE164 } from "./phone.js";
import { markup, styles } from "./view.js";
import type { SolveMessage, SolveRequest } from "./worker.js";

/** The channels the API knows; the `channels` attribute picks among them. */
const knownChannels = ["sms", "whatsapp", "voice", "email"] as const;
type Channel = (typeof knownChannels)[number];

/** The origin the component's script was loaded from: the API's, unless `api` names another. */
const scriptOrigin = (() => {
  const s = typeof document !== "undefined" ? (document.currentScript as HTMLScriptElement | null) : null;
  try {
    return s?.src ? new URL(s.src).origin : "";
  } catch {
    return "";
  }
})();

/** The element. Attributes: app, api, channels, country, lang, webotp. */
export class OtpgateVerify extends HTMLElement {
  static observedAttributes = ["app", "api", "channels", "country", "lang", "webotp"];

  #root: ShadowRoot;
  #t: Texts = texts.en;
  #client?: Client;
  #verification?: Verification;
  #address: { phone: string } | { email: string } = { phone: "" };
  #channel: Channel = "sms";
  #timer?: ReturnType<typeof setInterval>;
  #otp?: AbortController;
  #busy = false;

  constructor() {
    super();
    this.#root = this.attachShadow({ mode: "open", delegatesFocus: false });
    this.#root.innerHTML = `<style>${styles}</style>${markup}`;
    this.#$("form.start").addEventListener("submit", (e) => (e.preventDefault(), void this.#send()));
    this.#$("form.check").addEventListener("submit", (e) => (e.preventDefault(), void this.#check()));
    this.#$("button.resend").addEventListener("click", () => void this.#send());
    this.#$("button.change").addEventListener("click", () => this.reset());
    this.#$("select").addEventListener("change", () => this.#reformat());
    this.#$("#phone").addEventListener("input", () => this.#reformat());
    this.#$("#code").addEventListener("input", (e) => {
      const el = e.target as HTMLInputElement;
      el.value = el.value.replace(/\D/g, "");
    });
  }

  connectedCallback(): void {
    this.#render();
  }

  disconnectedCallback(): void {
    this.#stop();
  }

  attributeChangedCallback(): void {
    if (this.isConnected && this.#$("form.check").hidden) this.#render();
  }

  /** reset goes back to the address, forgetting the pending verification. */
  reset(): void {
    this.#stop();
    this.#verification = undefined;
    this.#show("start");
    this.#say("");
    this.#input().focus();
  }

  #$<E extends HTMLElement = HTMLElement>(sel: string): E {
    return this.#root.querySelector(sel) as E;
  }

  #input(): HTMLInputElement {
    return this.#$(this.#channel === "email" ? "#email" : "#phone");
  }

  /** render applies the attributes: the language, the channels, the countries and the API. */
  #render(): void {
    const lang = this.closest("[lang]")?.getAttribute("lang") || navigator.language;
    const locale = localeOf(lang);
    this.#t = texts[locale];
    this.#$(".container").setAttribute("dir", rtl.has(locale) ? "rtl" : "ltr");
    for (const el of this.#root.querySelectorAll<HTMLElement>("[data-t]")) {
      el.textContent = this.#t[el.dataset.t as keyof Texts];
    }
    this.#client = createClient({ baseUrl: this.getAttribute("api") || scriptOrigin || undefined, app: this.getAttribute("app") || undefined });

    const asked = (this.getAttribute("channels") || "sms").split(/[\s,]+/).filter((c): c is Channel => (knownChannels as readonly string[]).includes(c));
    const channels = asked.length ? [...new Set(asked)] : (["sms"] as Channel[]);
    if (!channels.includes(this.#channel)) this.#channel = channels[0];
    const set = this.#$("fieldset.channels");
    set.querySelectorAll("label").forEach((l) => l.remove());
    for (const c of channels) {
      const label = document.createElement("label");
      label.className = "channel";
      label.setAttribute("part", "channel");
      const radio = document.createElement("input");
      Object.assign(radio, { type: "radio", name: "channel", value: c, checked: c === this.#channel });
      radio.addEventListener("change", () => this.#pick(c));
      label.append(radio, this.#t[c === "email" ? "mail" : c]);
      set.append(label);
    }
    set.hidden = channels.length < 2;

    const select = this.#$<HTMLSelectElement>("select");
    const current = select.value || defaultCountry(this.getAttribute("country"), [lang, ...navigator.languages]);
    select.replaceChildren(...countries(locale).map((c) => new Option(c.label, c.code, false, c.code === current)));
    select.value = current;
    this.#pick(this.#channel);
  }

  #pick(c: Channel): void {
    this.#channel = c;
    this.#$(".phone").hidden = c === "email";
    this.#$(".field.email").hidden = c !== "email";
  }

  /** reformat writes the number as its country does, while the caret is at its end. */
  #reformat(): void {
    const input = this.#$<HTMLInputElement>("#phone");
    input.removeAttribute("aria-invalid");
    if (input.selectionStart !== input.value.length) return;
    const select = this.#$<HTMLSelectElement>("select");
    const f = formatTyped(input.value, select.value as CountryCode);
    input.value = f.text;
    if (f.country && input.value.startsWith("+") && isCountry(f.country)) select.value = f.country;
  }

  #show(view: "start" | "check" | "done"): void {
    this.#$("form.start").hidden = view !== "start";
    this.#$("form.check").hidden = view !== "check";
  }

  /** say puts a sentence in the live region; kind sets its part and class for themes. */
  #say(text: string, kind: "info" | "error" | "success" = "info", code = ""): void {
    const m = this.#$("#message");
    m.textContent = text;
    m.className = "message " + kind;
    m.setAttribute("part", kind === "info" ? "message" : "message " + kind);
    m.dataset.code = code;
  }

  #setBusy(busy: boolean): void {
    this.#busy = busy;
    for (const b of this.#root.querySelectorAll<HTMLButtonElement>("button:not(.resend)")) b.disabled = busy;
    if (busy) this.#$<HTMLButtonElement>("button.resend").disabled = true;
    else this.#tick();
  }

  #emit(type: string, detail: unknown): void {
    this.dispatchEvent(new CustomEvent(type, { detail, bubbles: true, composed: true }));
  }

  /** send sends (or resends) a code, solving the proof of work a refusal asks for. */
  async #send(): Promise<void> {
    if (this.#busy || !this.#client) return;
    const resend = !!this.#verification;
    if (!resend) {
      const text = this.#input().value.trim();
      const country = this.#$<HTMLSelectElement>("select").value as CountryCode;
      this.#address = this.#channel === "email" ? { email: text } : { phone: toE164(text, country) };
    }
    const body = { ...this.#address, channel: this.#channel };
    this.#setBusy(true);
    this.#say(this.#t.sending);
    let altcha: string | undefined;
    try {
      for (let round = 0; ; round++) {
        try {
          const sent = await this.#client.send(altcha ? { ...body, altcha } : body);
          this.#sent(sent.verification);
          return;
        } catch (err) {
          const ch = err instanceof ProblemError ? err.problem.challenge : undefined;
          if (!ch || round >= 2) throw err;
          const n = await this.#solve(ch);
          if (n === null) throw new ProblemError(428, { ...(err as ProblemError).problem, code: "challenge_invalid" });
          altcha = altchaPayload(ch, n);
        }
      }
    } catch (err) {
      this.#problem(err, "send");
    } finally {
      this.#$("progress").hidden = true;
      this.#setBusy(false);
    }
  }

  /** solve finds a challenge's number in a worker, showing progress; null when none does. */
  async #solve(ch: Challenge): Promise<number | null> {
    const bar = this.#$<HTMLProgressElement>("progress");
    bar.value = 0;
    bar.hidden = false;
    this.#say(format(this.#t.solving, { p: 0 }), "info", "challenge_required");
    const show = (p: number) => {
      bar.value = Math.round(p * 100);
      this.#$("#message").textContent = format(this.#t.solving, { p: bar.value });
    };
    let worker: Worker;
    try {
      worker = new Worker(URL.createObjectURL(new Blob([workerSource], { type: "text/javascript" })));
    } catch {
      // A page whose Content-Security-Policy refuses blob: workers: solve here, without progress.
      const found = await solveChallenge(ch.challenge, ch.salt, ch.algorithm, ch.maxnumber).promise;
      return found ? found.number : null;
    }
    try {
      return await new Promise<number | null>((resolve) => {
        worker.onmessage = (e: MessageEvent<SolveMessage>) => {
          if ("progress" in e.data) show(e.data.progress);
          else resolve(e.data.number);
        };
        worker.onerror = () => resolve(null);
        worker.postMessage({ algorithm: ch.algorithm, challenge: ch.challenge, salt: ch.salt, maxnumber: ch.maxnumber } satisfies SolveRequest);
      });
    } finally {
      worker.terminate();
    }
  }

  #sent(v: Verification): void {
    this.#verification = v;
    const to = v.phone ? display(v.phone) : (v.email ?? "");
    this.#$(".sent-to").textContent = format(this.#t.sentTo, { to });
    this.#say("");
    this.#show("check");
    const code = this.#$<HTMLInputElement>("#code");
    code.value = "";
    code.removeAttribute("aria-invalid");
    code.focus();
    this.#countdown();
    this.#webOTP();
    this.#emit("sent", v);
  }

  /** check checks the code typed (or read by WebOTP) against the pending verification. */
  async #check(): Promise<void> {
    const v = this.#verification;
    const input = this.#$<HTMLInputElement>("#code");
    if (this.#busy || !this.#client || !v || !input.value) return;
    this.#setBusy(true);
    try {
      const r = await this.#client.check({ id: v.id, code: input.value });
      this.#stop();
      this.#show("done");
      this.#say(this.#t.verified, "success");
      this.#$("#message").focus();
      this.#emit("verified", { token: r.token, id: r.id, phone: r.phone, email: r.email, status: r.status });
    } catch (err) {
      input.setAttribute("aria-invalid", "true");
      input.select();
      this.#problem(err, "check");
    } finally {
      this.#setBusy(false);
    }
  }

  /** problem shows a refusal as its sentence in the page's language and emits it. */
  #problem(err: unknown, during: "send" | "check"): void {
    const p: Problem =
      err instanceof ProblemError
        ? err.problem
        : ({ type: "urn:otpgate:problem:internal", title: "Error", status: 0, detail: String(err), code: "internal" } as Problem);
    const retry = typeof p.retry_after_seconds === "number" ? p.retry_after_seconds : 0;
    const text = format(this.#t[problemKey(p.code, during)], { t: clock(retry), n: p.attempts_left ?? 0 });
    this.#say(text, "error", p.code);
    if (!this.#verification && ["invalid_phone", "invalid_email", "country_not_allowed", "number_type_not_allowed", "blocked"].includes(p.code)) {
      this.#input().setAttribute("aria-invalid", "true");
    }
    this.#emit("problem", { status: err instanceof ProblemError ? err.status : 0, problem: p });
  }

  /** countdown keeps the resend button shut until next_resend_at, counting down to it. */
  #countdown(): void {
    clearInterval(this.#timer);
    this.#tick();
    this.#timer = setInterval(() => this.#tick(), 250);
  }

  #tick(): void {
    const v = this.#verification;
    const button = this.#$<HTMLButtonElement>("button.resend");
    if (!v) return;
    button.hidden = v.sends_left < 1;
    const left = (Date.parse(v.next_resend_at) - Date.now()) / 1000;
    const text = left > 0 ? format(this.#t.resendIn, { t: clock(left) }) : this.#t.resend;
    if (button.textContent !== text) button.textContent = text;
    button.disabled = this.#busy || left > 0;
    if (left <= 0) clearInterval(this.#timer);
  }

  /** webOTP fills the code from the SMS where the browser offers it and the app's SMS carry its domain. */
  #webOTP(): void {
    this.#otp?.abort();
    if (!this.hasAttribute("webotp") || this.#channel !== "sms" || !("OTPCredential" in window)) return;
    const ac = new AbortController();
    this.#otp = ac;
    navigator.credentials
      .get({ otp: { transport: ["sms"] }, signal: ac.signal } as CredentialRequestOptions)
      .then((cred) => {
        const code = (cred as unknown as { code?: string } | null)?.code;
        if (!code || ac.signal.aborted) return;
        this.#$<HTMLInputElement>("#code").value = code;
        void this.#check();
      })
      .catch(() => {
        // Dismissed, aborted or unsupported: the user types the code.
      });
  }

  #stop(): void {
    clearInterval(this.#timer);
    this.#otp?.abort();
    this.#otp = undefined;
  }
}
