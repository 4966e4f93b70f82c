package otp

import (
	"fmt"
	"time"
)

// validLocale reports whether there is a message template for the locale.
func validLocale(l string) bool { return l == "en" || l == "ja" }

// renderMessage writes the SMS text. The expiry is rounded up to whole minutes so
// the message never promises more time than the code has.
func renderMessage(locale, code string, ttl time.Duration) string {
	minutes := int((ttl + time.Minute - 1) / time.Minute)
	switch locale {
	case "ja":
		return fmt.Sprintf("認証コード: %s\n%d分以内に入力してください。このコードは誰にも教えないでください。", code, minutes)
	default:
		unit := "minutes"
		if minutes == 1 {
			unit = "minute"
		}
		return fmt.Sprintf("Your verification code is %s. It expires in %d %s. Never share this code with anyone.", code, minutes, unit)
	}
}
