package message

import (
	"fmt"
	"strings"
	"text/template"
)

// paymentTexts name the payment a code confirms (PSD2 dynamic linking), one sentence per
// locale over Data's Amount and Payee: the user must see what they approve before they
// give the code away. A message that names a payment carries it after its text (before
// the Android app hash and WebOTP lines, which must stay last), unless the app's own
// template names both itself.
var paymentTexts = map[string]string{
	"en":      "Payment of {{.Amount}} to {{.Payee}}.",
	"en-GB":   "Payment of {{.Amount}} to {{.Payee}}.",
	"es":      "Pago de {{.Amount}} a {{.Payee}}.",
	"fr":      "Paiement de {{.Amount}} à {{.Payee}}.",
	"de":      "Zahlung von {{.Amount}} an {{.Payee}}.",
	"it":      "Pagamento di {{.Amount}} a {{.Payee}}.",
	"pt-BR":   "Pagamento de {{.Amount}} para {{.Payee}}.",
	"pt":      "Pagamento de {{.Amount}} a {{.Payee}}.",
	"nl":      "Betaling van {{.Amount}} aan {{.Payee}}.",
	"ca":      "Pagament de {{.Amount}} a {{.Payee}}.",
	"af":      "Betaling van {{.Amount}} aan {{.Payee}}.",
	"sv":      "Betalning på {{.Amount}} till {{.Payee}}.",
	"da":      "Betaling på {{.Amount}} til {{.Payee}}.",
	"nb":      "Betaling på {{.Amount}} til {{.Payee}}.",
	"fi":      "Maksu {{.Amount}} saajalle {{.Payee}}.",
	"et":      "Makse {{.Amount}} saajale {{.Payee}}.",
	"lt":      "Mokėjimas {{.Amount}} gavėjui {{.Payee}}.",
	"pl":      "Płatność {{.Amount}} na rzecz {{.Payee}}.",
	"cs":      "Platba {{.Amount}} příjemci {{.Payee}}.",
	"sk":      "Platba {{.Amount}} príjemcovi {{.Payee}}.",
	"hr":      "Plaćanje {{.Amount}} primatelju {{.Payee}}.",
	"hu":      "Fizetés: {{.Amount}}, kedvezményezett: {{.Payee}}.",
	"ro":      "Plată de {{.Amount}} către {{.Payee}}.",
	"ru":      "Платёж {{.Amount}} получателю {{.Payee}}.",
	"uk":      "Платіж {{.Amount}} отримувачу {{.Payee}}.",
	"el":      "Πληρωμή {{.Amount}} προς {{.Payee}}.",
	"tr":      "{{.Payee}} alıcısına {{.Amount}} ödeme.",
	"ar":      "دفع {{.Amount}} إلى {{.Payee}}.",
	"he":      "תשלום של {{.Amount}} ל-{{.Payee}}.",
	"hi":      "{{.Payee}} को {{.Amount}} का भुगतान।",
	"mr":      "{{.Payee}} यांना {{.Amount}} चे पेमेंट.",
	"kn":      "{{.Payee}} ಅವರಿಗೆ {{.Amount}} ಪಾವತಿ.",
	"te":      "{{.Payee}}కు {{.Amount}} చెల్లింపు.",
	"ja":      "{{.Payee}}への{{.Amount}}のお支払い。",
	"zh-Hans": "向{{.Payee}}支付{{.Amount}}。",
	"zh-Hant": "向{{.Payee}}支付{{.Amount}}。",
	"ko":      "{{.Payee}}에게 {{.Amount}} 결제.",
	"id":      "Pembayaran {{.Amount}} kepada {{.Payee}}.",
	"ms":      "Pembayaran {{.Amount}} kepada {{.Payee}}.",
	"tl":      "Bayad na {{.Amount}} sa {{.Payee}}.",
	"th":      "ชำระเงิน {{.Amount}} ให้ {{.Payee}}",
	"vi":      "Thanh toán {{.Amount}} cho {{.Payee}}.",
}

// parsePayment parses a locale's payment sentence.
func parsePayment(tag string) (*template.Template, error) {
	text, ok := paymentTexts[tag]
	if !ok {
		return nil, fmt.Errorf("message: built-in %s: no payment sentence", tag)
	}
	return parseText(tag+"/payment", text)
}

// namesPayment reports whether an app's own template text shows the payment itself.
func namesPayment(text string) bool {
	return strings.Contains(text, ".Amount") && strings.Contains(text, ".Payee")
}

// withPayment adds the payment sentence to a rendered text unless its template named the
// payment itself; sep goes between them.
func (l *locale) withPayment(body string, d Data, own bool, sep string) (string, error) {
	if d.Amount == "" || own {
		return body, nil
	}
	p, err := run(l.payment, d)
	if err != nil {
		return "", err
	}
	return body + sep + p, nil
}
