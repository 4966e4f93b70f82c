package message

// texts are one locale's built-in templates. Each is a text/template over Data; the
// email lines are put together by emailText and the HTML layout.
type texts struct {
	// tag is the BCP 47 language tag for the email's lang attribute.
	tag                 string
	sms, voice, subject string
	// The email's lines: what the code is, how long it lasts, the warning, and what to
	// do about an email one did not ask for.
	intro, expiry, warn, ignore string
	// Expiry phrases: one, and more than one, minute and second (%d is the number).
	minute, minutes, second, seconds string
	// digitSep goes between the digits a voice call reads out, so it reads them one by one.
	digitSep string
}

// builtin holds the built-in locales. The SMS fits one segment in its encoding with a
// six-digit code; en, fr, de, it and id are GSM-7 throughout.
var builtin = map[string]texts{
	"en": {
		tag:     "en",
		sms:     "{{if .App}}{{.App}}: {{end}}Your verification code is {{.Code}}. It expires in {{.Expiry}}. Never share this code with anyone.",
		voice:   "{{if .App}}This is {{.App}}. {{end}}Your verification code is: {{.Code}}. Once again, your code is: {{.Code}}.",
		subject: "Your {{if .App}}{{.App}} {{end}}verification code",
		intro:   "Here is your {{if .App}}{{.App}} {{end}}verification code:",
		expiry:  "It expires in {{.Expiry}}.",
		warn:    "Never share this code with anyone.",
		ignore:  "If you didn't ask for this code, you can ignore this email.",
		minute:  "%d minute", minutes: "%d minutes", second: "%d second", seconds: "%d seconds",
		digitSep: ", ",
	},
	"ja": {
		tag:     "ja",
		sms:     "{{if .App}}【{{.App}}】{{end}}認証コード: {{.Code}}\n{{.Expiry}}以内に入力してください。このコードは誰にも教えないでください。",
		voice:   "{{if .App}}{{.App}}です。{{end}}認証コードをお知らせします。{{.Code}}。繰り返します。{{.Code}}。",
		subject: "{{if .App}}【{{.App}}】{{end}}認証コードのお知らせ",
		intro:   "{{if .App}}{{.App}}の{{end}}認証コードをお送りします。",
		expiry:  "{{.Expiry}}以内に入力してください。",
		warn:    "このコードは誰にも教えないでください。",
		ignore:  "お心当たりのない場合は、このメールを破棄してください。",
		minute:  "%d分", minutes: "%d分", second: "%d秒", seconds: "%d秒",
		digitSep: "、",
	},
	"zh-Hans": {
		tag:     "zh-Hans",
		sms:     "{{if .App}}【{{.App}}】{{end}}您的验证码是{{.Code}}，{{.Expiry}}内有效。请勿将验证码告诉他人。",
		voice:   "{{if .App}}这里是{{.App}}。{{end}}您的验证码是：{{.Code}}。重复一遍，您的验证码是：{{.Code}}。",
		subject: "{{if .App}}【{{.App}}】{{end}}您的验证码",
		intro:   "您的{{if .App}}{{.App}}{{end}}验证码是：",
		expiry:  "验证码{{.Expiry}}内有效。",
		warn:    "请勿将验证码告诉他人。",
		ignore:  "如果这不是您本人的操作，请忽略此邮件。",
		minute:  "%d分钟", minutes: "%d分钟", second: "%d秒", seconds: "%d秒",
		digitSep: "、",
	},
	"zh-Hant": {
		tag:     "zh-Hant",
		sms:     "{{if .App}}【{{.App}}】{{end}}您的驗證碼為{{.Code}}，{{.Expiry}}內有效。請勿將驗證碼告訴他人。",
		voice:   "{{if .App}}這裡是{{.App}}。{{end}}您的驗證碼是：{{.Code}}。再重複一次，您的驗證碼是：{{.Code}}。",
		subject: "{{if .App}}【{{.App}}】{{end}}您的驗證碼",
		intro:   "您的{{if .App}}{{.App}}{{end}}驗證碼為：",
		expiry:  "驗證碼{{.Expiry}}內有效。",
		warn:    "請勿將驗證碼告訴他人。",
		ignore:  "如果您沒有申請驗證碼，請忽略這封郵件。",
		minute:  "%d分鐘", minutes: "%d分鐘", second: "%d秒", seconds: "%d秒",
		digitSep: "、",
	},
	"ko": {
		tag:     "ko",
		sms:     "{{if .App}}[{{.App}}] {{end}}인증번호: {{.Code}}\n{{.Expiry}} 안에 입력해 주세요. 이 번호는 누구에게도 알려 주지 마세요.",
		voice:   "{{if .App}}{{.App}}입니다. {{end}}인증번호를 알려 드립니다. {{.Code}}. 다시 한번 알려 드립니다. {{.Code}}.",
		subject: "{{if .App}}[{{.App}}] {{end}}인증번호 안내",
		intro:   "요청하신 {{if .App}}{{.App}} {{end}}인증번호입니다.",
		expiry:  "{{.Expiry}} 안에 입력해 주세요.",
		warn:    "이 번호는 누구에게도 알려 주지 마세요.",
		ignore:  "본인이 요청하지 않았다면 이 메일은 무시하셔도 됩니다.",
		minute:  "%d분", minutes: "%d분", second: "%d초", seconds: "%d초",
		digitSep: ", ",
	},
	"es": {
		tag:     "es",
		sms:     "{{if .App}}{{.App}}: {{end}}Tu código es {{.Code}}. Vence en {{.Expiry}}. No lo compartas con nadie.",
		voice:   "{{if .App}}Hola, te llamamos de {{.App}}. {{end}}Tu código de verificación es: {{.Code}}. Te lo repito: {{.Code}}.",
		subject: "Tu código de verificación{{if .App}} de {{.App}}{{end}}",
		intro:   "Este es tu código de verificación{{if .App}} de {{.App}}{{end}}:",
		expiry:  "Vence en {{.Expiry}}.",
		warn:    "No lo compartas con nadie.",
		ignore:  "Si no solicitaste este código, puedes ignorar este correo.",
		minute:  "%d minuto", minutes: "%d minutos", second: "%d segundo", seconds: "%d segundos",
		digitSep: ", ",
	},
	"fr": {
		tag:     "fr",
		sms:     "{{if .App}}{{.App}} : {{end}}Votre code de vérification est {{.Code}}. Il expire dans {{.Expiry}}. Ne le communiquez à personne.",
		voice:   "{{if .App}}Ici {{.App}}. {{end}}Votre code de vérification est : {{.Code}}. Je répète : {{.Code}}.",
		subject: "Votre code de vérification{{if .App}} {{.App}}{{end}}",
		intro:   "Voici votre code de vérification{{if .App}} {{.App}}{{end}} :",
		expiry:  "Il expire dans {{.Expiry}}.",
		warn:    "Ne le communiquez à personne.",
		ignore:  "Si vous n'êtes pas à l'origine de cette demande, ignorez simplement cet e-mail.",
		minute:  "%d minute", minutes: "%d minutes", second: "%d seconde", seconds: "%d secondes",
		digitSep: ", ",
	},
	"de": {
		tag:     "de",
		sms:     "{{if .App}}{{.App}}: {{end}}Ihr Bestätigungscode lautet {{.Code}}. Er ist {{.Expiry}} gültig. Geben Sie ihn an niemanden weiter.",
		voice:   "{{if .App}}Hier ist {{.App}}. {{end}}Ihr Bestätigungscode lautet: {{.Code}}. Ich wiederhole: {{.Code}}.",
		subject: "Ihr Bestätigungscode{{if .App}} für {{.App}}{{end}}",
		intro:   "Hier ist Ihr Bestätigungscode{{if .App}} für {{.App}}{{end}}:",
		expiry:  "Er ist {{.Expiry}} gültig.",
		warn:    "Geben Sie ihn an niemanden weiter.",
		ignore:  "Falls Sie diesen Code nicht angefordert haben, können Sie diese E-Mail ignorieren.",
		minute:  "%d Minute", minutes: "%d Minuten", second: "%d Sekunde", seconds: "%d Sekunden",
		digitSep: ", ",
	},
	"pt-BR": {
		tag:     "pt-BR",
		sms:     "{{if .App}}{{.App}}: {{end}}Seu código: {{.Code}}. Expira em {{.Expiry}}. Não compartilhe com ninguém.",
		voice:   "{{if .App}}Esta é uma mensagem de {{.App}}. {{end}}Seu código de verificação é: {{.Code}}. Repetindo: {{.Code}}.",
		subject: "{{if .App}}{{.App}}: seu{{else}}Seu{{end}} código de verificação",
		intro:   "Seu código de verificação é:",
		expiry:  "Ele expira em {{.Expiry}}.",
		warn:    "Não compartilhe este código com ninguém.",
		ignore:  "Se você não pediu este código, pode ignorar este e-mail.",
		minute:  "%d minuto", minutes: "%d minutos", second: "%d segundo", seconds: "%d segundos",
		digitSep: ", ",
	},
	"it": {
		tag:     "it",
		sms:     "{{if .App}}{{.App}}: {{end}}Il tuo codice di verifica è {{.Code}}. Scade tra {{.Expiry}}. Non condividerlo con nessuno.",
		voice:   "{{if .App}}Ti chiamiamo da {{.App}}. {{end}}Il tuo codice di verifica è: {{.Code}}. Ripeto: {{.Code}}.",
		subject: "Il tuo codice di verifica{{if .App}} {{.App}}{{end}}",
		intro:   "Ecco il tuo codice di verifica{{if .App}} {{.App}}{{end}}:",
		expiry:  "Scade tra {{.Expiry}}.",
		warn:    "Non condividerlo con nessuno.",
		ignore:  "Se non hai richiesto questo codice, puoi ignorare questa email.",
		minute:  "%d minuto", minutes: "%d minuti", second: "%d secondo", seconds: "%d secondi",
		digitSep: ", ",
	},
	"id": {
		tag:     "id",
		sms:     "{{if .App}}{{.App}}: {{end}}Kode verifikasi Anda adalah {{.Code}}. Berlaku selama {{.Expiry}}. Jangan berikan kode ini kepada siapa pun.",
		voice:   "{{if .App}}Ini adalah {{.App}}. {{end}}Kode verifikasi Anda adalah: {{.Code}}. Sekali lagi, kode Anda adalah: {{.Code}}.",
		subject: "Kode verifikasi {{if .App}}{{.App}} {{end}}Anda",
		intro:   "Berikut kode verifikasi {{if .App}}{{.App}} {{end}}Anda:",
		expiry:  "Kode ini berlaku selama {{.Expiry}}.",
		warn:    "Jangan berikan kode ini kepada siapa pun.",
		ignore:  "Jika Anda tidak meminta kode ini, abaikan saja email ini.",
		minute:  "%d menit", minutes: "%d menit", second: "%d detik", seconds: "%d detik",
		digitSep: ", ",
	},
	"hi": {
		tag:     "hi",
		sms:     "{{if .App}}{{.App}}: {{end}}आपका OTP {{.Code}} है। यह {{.Expiry}} तक मान्य है। इसे किसी से साझा न करें।",
		voice:   "{{if .App}}नमस्ते, यह कॉल {{.App}} की ओर से है। {{end}}आपका सत्यापन कोड है: {{.Code}}। एक बार फिर: {{.Code}}।",
		subject: "आपका {{if .App}}{{.App}} {{end}}सत्यापन कोड",
		intro:   "आपका {{if .App}}{{.App}} {{end}}सत्यापन कोड यह है:",
		expiry:  "यह {{.Expiry}} तक मान्य है।",
		warn:    "इसे किसी के साथ साझा न करें।",
		ignore:  "अगर आपने यह कोड नहीं माँगा है, तो इस ईमेल को अनदेखा करें।",
		minute:  "%d मिनट", minutes: "%d मिनट", second: "%d सेकंड", seconds: "%d सेकंड",
		digitSep: ", ",
	},
}
