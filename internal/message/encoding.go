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
	costs := make([]int, 0, len(text))
	gsm := true
	for _, r := range text {
		c, ok := gsmCost[r]
		if !ok {
			gsm = false
			break
		}
		costs = append(costs, c)
	}
	if gsm {
		return otp.EncodingGSM7, pack(costs, gsmSingle, gsmPart)
	}
	costs = costs[:0]
	for _, r := range text {
		costs = append(costs, utf16.RuneLen(r))
	}
	return otp.EncodingUCS2, pack(costs, ucs2Single, ucs2Part)
}

// pack counts the segments that units of the given sizes fill: one if they all fit in
// single, else parts of at most part, never splitting a unit.
func pack(costs []int, single, part int) int {
	total := 0
	for _, c := range costs {
		total += c
	}
	if total <= single {
		return 1
	}
	segments, used := 1, 0
	for _, c := range costs {
		if used+c > part {
			segments++
			used = 0
		}
		used += c
	}
	return segments
}
