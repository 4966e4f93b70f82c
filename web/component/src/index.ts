// The bundle's entry: defines <otpgate-verify> once, whatever else the page loaded.
import { OtpgateVerify } from "./element.js";

export { OtpgateVerify };

if (!customElements.get("otpgate-verify")) customElements.define("otpgate-verify", OtpgateVerify);
