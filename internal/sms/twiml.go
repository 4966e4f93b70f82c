package sms

import (
	"encoding/xml"
	"strings"
)

// sayVoice is the language and voice a call reads a locale's text in. Polly voices where
// Twilio has one for the language, Google voices where not.
type sayVoice struct{ language, voice string }

var voices = map[string]sayVoice{
	"en":      {"en-US", "Polly.Joanna"},
	"ja":      {"ja-JP", "Polly.Mizuki"},
	"zh-Hans": {"cmn-CN", "Polly.Zhiyu"},
	"zh-Hant": {"cmn-TW", "Google.cmn-TW-Standard-A"},
	"ko":      {"ko-KR", "Polly.Seoyeon"},
	"es":      {"es-US", "Polly.Lupe"},
	"fr":      {"fr-FR", "Polly.Lea"},
	"de":      {"de-DE", "Polly.Vicki"},
	"pt-BR":   {"pt-BR", "Polly.Camila"},
	"it":      {"it-IT", "Polly.Bianca"},
	"id":      {"id-ID", "Google.id-ID-Standard-A"},
	"hi":      {"hi-IN", "Polly.Aditi"},
	"en-GB":   {"en-GB", "Polly.Amy"},
	"af":      {"af-ZA", "Google.af-ZA-Standard-A"},
	"ar":      {"arb", "Polly.Zeina"},
	"ca":      {"ca-ES", "Google.ca-ES-Standard-A"},
	"cs":      {"cs-CZ", "Google.cs-CZ-Standard-A"},
	"da":      {"da-DK", "Polly.Naja"},
	"el":      {"el-GR", "Google.el-GR-Standard-A"},
	"et":      {"et-EE", "Google.et-EE-Standard-A"},
	"fi":      {"fi-FI", "Google.fi-FI-Standard-A"},
	"he":      {"he-IL", "Google.he-IL-Standard-A"},
	"hr":      {"hr-HR", "Google.hr-HR-Standard-A"},
	"hu":      {"hu-HU", "Google.hu-HU-Standard-A"},
	"kn":      {"kn-IN", "Google.kn-IN-Standard-A"},
	"lt":      {"lt-LT", "Google.lt-LT-Standard-A"},
	"mr":      {"mr-IN", "Google.mr-IN-Standard-A"},
	"ms":      {"ms-MY", "Google.ms-MY-Standard-A"},
	"nb":      {"nb-NO", "Polly.Liv"},
	"nl":      {"nl-NL", "Polly.Lotte"},
	"pl":      {"pl-PL", "Polly.Ewa"},
	"pt":      {"pt-PT", "Polly.Ines"},
	"ro":      {"ro-RO", "Polly.Carmen"},
	"ru":      {"ru-RU", "Polly.Tatyana"},
	"sk":      {"sk-SK", "Google.sk-SK-Standard-A"},
	"sv":      {"sv-SE", "Polly.Astrid"},
	"te":      {"te-IN", "Google.te-IN-Standard-A"},
	"th":      {"th-TH", "Google.th-TH-Standard-A"},
	"tl":      {"fil-PH", "Google.fil-PH-Standard-A"},
	"tr":      {"tr-TR", "Polly.Filiz"},
	"uk":      {"uk-UA", "Google.uk-UA-Standard-A"},
	"vi":      {"vi-VN", "Google.vi-VN-Standard-A"},
}

// TwiML is the call script that reads text in the locale's voice: a second's pause
// first, so the user has the phone at their ear, then the text, whose template spells
// the code out digit by digit and says it twice. An unknown locale reads in English.
func TwiML(locale, text string) string {
	v, ok := voices[locale]
	if !ok {
		v = voices["en"]
	}
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?><Response><Pause length="1"/><Say language="`)
	b.WriteString(v.language)
	b.WriteString(`" voice="`)
	b.WriteString(v.voice)
	b.WriteString(`">`)
	_ = xml.EscapeText(&b, []byte(text)) // a strings.Builder does not fail
	b.WriteString(`</Say></Response>`)
	return b.String()
}
