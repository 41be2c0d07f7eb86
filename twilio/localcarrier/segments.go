package localcarrier

import (
	"strings"
	"unicode/utf16"
)

// GSM 03.38 default alphabet (without the escape code) and its extension
// table, whose characters cost an escape plus the character.
const (
	gsmBasic = "@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?" +
		"¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà"
	gsmExtension = "\f^{}\\[~]|€"
)

// segments counts the SMS parts a carrier splits body into, as Twilio
// reports in num_segments: GSM-7 when every character is in the alphabet
// (160 septets in one part, else 153 per part), otherwise UCS-2 (70 UTF-16
// units, else 67 per part). A part never splits an escape pair or a
// surrogate pair. Parley bills by its own count; this one only makes the
// stand-in's answers look like Twilio's.
func segments(body string) int {
	single, part := 160, 153
	cost := gsmCost
	for _, r := range body {
		if gsmCost(r) == 0 {
			single, part, cost = 70, 67, utf16.RuneLen
			break
		}
	}
	total := 0
	for _, r := range body {
		total += cost(r)
	}
	if total <= single {
		return 1
	}
	parts, fill := 1, 0
	for _, r := range body {
		c := cost(r)
		if fill+c > part {
			parts, fill = parts+1, 0
		}
		fill += c
	}
	return parts
}

// gsmCost is the septets r takes in GSM-7, 0 when it has no GSM-7 form.
func gsmCost(r rune) int {
	switch {
	case strings.ContainsRune(gsmBasic, r):
		return 1
	case strings.ContainsRune(gsmExtension, r):
		return 2
	}
	return 0
}
