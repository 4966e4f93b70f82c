package message

import (
	"unicode/utf16"

	"otpgate/internal/otp"
)

// gsmBasic is the GSM 03.38 default alphabet: one septet each.
const gsmBasic = "@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞ\x1bÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?" +
	"¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà"

// gsmExtension is the extension table: an escape septet plus one, two septets each.
const gsmExtension = "\f^{}\\[~]|€"

// Segment sizes: a single SMS carries 160 septets or 70 UTF-16 units; the parts of a
// concatenated one lose room to their header, down to 153 and 67.
const (
	gsmSingle, gsmPart   = 160, 153
	ucs2Single, ucs2Part = 70, 67
)

var gsmCost = func() map[rune]int {
	m := map[rune]int{}
	for _, r := range gsmBasic {
		if r != 0x1b {
			m[r] = 1
		}
	}
	for _, r := range gsmExtension {
		m[r] = 2
	}
	return m
}()

// Encoding reports how an SMS with this text is sent: GSM-7 when every character is in
// the GSM 03.38 alphabet or its extension table, otherwise UCS-2. The segment count
// follows from it; an extension character's two septets, like a surrogate pair's two
// UTF-16 units, are never split across segments.
func Encoding(text string) (encoding string, segments int) {
	gsm := true
	for _, r := range text {
		if gsmRuneCost(r) == 0 {
			gsm = false
			break
		}
	}
	if gsm {
		return otp.EncodingGSM7, pack(text, gsmRuneCost, gsmSingle, gsmPart)
	}
	return otp.EncodingUCS2, pack(text, utf16.RuneLen, ucs2Single, ucs2Part)
}

// gsmRuneCost is r's septets in GSM-7, 0 when it has none. Every message is measured
// before the limiter decides, refused sends included, so ASCII skips the map.
func gsmRuneCost(r rune) int {
	if r >= 0 && r < rune(len(gsmASCII)) {
		return int(gsmASCII[r])
	}
	return gsmCost[r]
}

// gsmASCII is gsmCost for the ASCII range.
var gsmASCII = func() (t [128]uint8) {
	for r := range t {
		t[r] = uint8(gsmCost[rune(r)])
	}
	return t
}()

// pack counts the segments text fills when each character takes cost(r) units: one if
// they all fit in single, else parts of at most part, never splitting a character.
func pack(text string, cost func(rune) int, single, part int) int {
	total := 0
	for _, r := range text {
		total += cost(r)
	}
	if total <= single {
		return 1
	}
	segments, used := 1, 0
	for _, r := range text {
		c := cost(r)
		if used+c > part {
			segments++
			used = 0
		}
		used += c
	}
	return segments
}
