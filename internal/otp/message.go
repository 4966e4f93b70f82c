package otp

import (
	"fmt"
	"time"
)

// validLocale reports whether there is a message template for the locale.
func validLocale(l string) bool { return l == "en" || l == "ja" }

// renderMessage writes the SMS text. The expiry is rounded down to whole minutes (below a
// minute, to whole seconds), so the message never promises more time than the code has:
// a 90 s code "expires in 1 minute", never in 2.
func renderMessage(locale, code string, ttl time.Duration) string {
	n, unit := int(ttl/time.Minute), "minute"
	if n == 0 {
		n, unit = max(int(ttl/time.Second), 1), "second"
	}
	switch locale {
	case "ja":
		ja := "分"
		if unit == "second" {
			ja = "秒"
		}
		return fmt.Sprintf("認証コード: %s\n%d%s以内に入力してください。このコードは誰にも教えないでください。", code, n, ja)
	default:
		if n != 1 {
			unit += "s"
		}
		return fmt.Sprintf("Your verification code is %s. It expires in %d %s. Never share this code with anyone.", code, n, unit)
	}
}
