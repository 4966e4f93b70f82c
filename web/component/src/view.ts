// The component's shadow DOM: its markup, every element named by a CSS part so a page can
// theme it (otpgate-verify::part(button) { … }), and its default styles, which read a few
// custom properties (--otpgate-accent, --otpgate-radius, --otpgate-gap, --otpgate-error).

/** The CSS parts, for the documentation and the tests. */
export const parts = [
  "container", "form", "start-form", "code-form", "channels", "channel", "label", "field",
  "country", "input", "phone", "email", "code", "button", "send", "verify", "resend", "change",
  "progress", "sent-to", "message", "error", "success",
] as const;

export const styles = `
:host { display: block; font: inherit; color: inherit; max-width: 24rem;
  --_accent: var(--otpgate-accent, #2457d6); --_radius: var(--otpgate-radius, .375rem);
  --_gap: var(--otpgate-gap, .75rem); --_error: var(--otpgate-error, #b3261e); }
:host([hidden]) { display: none; }
[hidden] { display: none !important; }
.container { display: grid; gap: var(--_gap); }
form { display: grid; gap: var(--_gap); margin: 0; }
fieldset { border: 0; margin: 0; padding: 0; display: flex; flex-wrap: wrap; gap: .25rem 1rem; }
legend { padding: 0; margin-bottom: .25rem; }
.field { display: grid; gap: .25rem; }
.phone { display: grid; grid-template-columns: minmax(0, 2fr) minmax(0, 3fr); gap: .5rem; }
label { font-weight: 600; }
.channel { font-weight: normal; display: inline-flex; align-items: center; gap: .25rem; }
input, select { font: inherit; padding: .5rem .625rem; border: 1px solid #8a8f98; border-radius: var(--_radius);
  background: Field; color: FieldText; min-width: 0; }
input[aria-invalid="true"] { border-color: var(--_error); }
input.code { letter-spacing: .3em; font-variant-numeric: tabular-nums; }
.container[dir="rtl"] input[dir="ltr"] { text-align: right; }
.buttons { display: flex; flex-wrap: wrap; gap: .5rem; }
button { font: inherit; padding: .5rem 1rem; border-radius: var(--_radius); border: 1px solid var(--_accent);
  background: var(--_accent); color: #fff; cursor: pointer; }
button.secondary { background: transparent; color: var(--_accent); }
button:disabled { opacity: .55; cursor: default; }
:is(input, select, button):focus-visible { outline: 2px solid var(--_accent); outline-offset: 2px; }
progress { width: 100%; }
.message { margin: 0; min-height: 1.25em; }
.message:focus { outline: none; }
.message.error { color: var(--_error); }
.sent-to { margin: 0; }
`;

export const markup = `
<div class="container" part="container">
  <form class="start" part="form start-form" novalidate>
    <fieldset class="channels" part="channels" hidden><legend part="label" data-t="via"></legend></fieldset>
    <div class="phone">
      <div class="field" part="field">
        <label part="label" for="country" data-t="country"></label>
        <select id="country" part="country" autocomplete="country"></select>
      </div>
      <div class="field" part="field">
        <label part="label" for="phone" data-t="phone"></label>
        <input id="phone" part="input phone" dir="ltr" type="tel" inputmode="tel" autocomplete="tel" aria-describedby="message">
      </div>
    </div>
    <div class="field email" part="field" hidden>
      <label part="label" for="email" data-t="email"></label>
      <input id="email" part="input email" dir="ltr" type="email" autocomplete="email" aria-describedby="message">
    </div>
    <div class="buttons"><button class="send" part="button send" type="submit" data-t="send"></button></div>
  </form>
  <progress class="progress" part="progress" max="100" value="0" aria-labelledby="message" hidden></progress>
  <form class="check" part="form code-form" novalidate hidden>
    <p class="sent-to" part="sent-to"></p>
    <div class="field" part="field">
      <label part="label" for="code" data-t="code"></label>
      <input id="code" class="code" part="input code" dir="ltr" type="text" inputmode="numeric" pattern="[0-9]*"
        maxlength="10" autocomplete="one-time-code" enterkeyhint="done" aria-describedby="message">
    </div>
    <div class="buttons">
      <button class="verify" part="button verify" type="submit" data-t="verify"></button>
      <button class="resend secondary" part="button resend" type="button"></button>
      <button class="change secondary" part="button change" type="button" data-t="change"></button>
    </div>
  </form>
  <p id="message" class="message" part="message" role="status" aria-live="polite" tabindex="-1"></p>
</div>
`;
