package sms

import "strings"

// Encoding is the character set a message travels in.
type Encoding string

// The two encodings of 3GPP TS 23.038 a message may use.
const (
	GSM7 Encoding = "gsm7"
	UCS2 Encoding = "ucs2"
)

// Segment capacities. A message longer than one segment is sent as
// concatenated parts whose user-data header takes 6 octets, which leaves 153
// septets or 67 UTF-16 code units for text.
const (
	gsm7Single = 160
	gsm7Part   = 153
	ucs2Single = 70
	ucs2Part   = 67
)

// gsm7Basic is the GSM 7-bit default alphabet of 3GPP TS 23.038 §6.2.1 in
// code order, 0x00 to 0x7F, less 0x1B (ESC), which only introduces the
// extension table and cannot be sent as a character of its own. 0x09 is the
// capital Ç the standard shows, not the small ç of some older mappings.
const gsm7Basic = "@£$¥èéùìòÇ\nØø\rÅå" +
	"Δ_ΦΓΛΩΠΨΣΘΞÆæßÉ" +
	" !\"#¤%&'()*+,-./" +
	"0123456789:;<=>?" +
	"¡ABCDEFGHIJKLMNO" +
	"PQRSTUVWXYZÄÖÑÜ§" +
	"¿abcdefghijklmnopqrstuvwxyzäöñüà"

// gsm7Extension is the default extension table (§6.2.1.1): each character
// is sent as ESC plus its code, two septets.
const gsm7Extension = "\f^{}\\[]~|€"

// gsm7Latin1 gives the septets of every rune below U+0100: 0 when it has no
// GSM-7 form. Nearly every rune of a GSM-7 body falls here, so the common
// case is one array read; the few others (Greek capitals, €) are looked up in
// the short strings above.
var gsm7Latin1 = func() (t [256]uint8) {
	for _, r := range gsm7Basic {
		if r < 256 {
			t[r] = 1
		}
	}
	for _, r := range gsm7Extension {
		if r < 256 {
			t[r] = 2
		}
	}
	return t
}()

// gsm7Septets returns how many septets r takes in GSM-7, 0 if it has no
// GSM-7 form.
func gsm7Septets(r rune) int {
	if uint32(r) < 256 {
		return int(gsm7Latin1[r])
	}
	switch {
	case strings.ContainsRune(gsm7Basic, r):
		return 1
	case strings.ContainsRune(gsm7Extension, r):
		return 2
	}
	return 0
}

// Segmentation describes how a body is sent.
type Segmentation struct {
	Encoding Encoding
	// Segments is how many messages the carrier sends (and bills).
	Segments int
	// Units is the encoded length: septets for GSM-7, UTF-16 code units for
	// UCS-2.
	Units int
	// Chars is the length in Unicode code points, the unit of MaxBodyChars.
	Chars int
}

// Measure works out the encoding and segments of body exactly as a carrier
// does under 3GPP TS 23.038: GSM-7 when every character is in the default
// alphabet or its extension table, otherwise UCS-2. A part of a long message
// never ends inside an escape pair or a surrogate pair; such a character
// moves whole to the next part, which can cost one more segment than the
// length alone suggests.
//
// An empty body measures as one GSM-7 segment of zero units: an SMS with no
// text is still one message on the network and one on the bill, and a count
// of zero would price it at nothing. Whether an empty body may be sent at all
// is the caller's rule, not this one's. Invalid UTF-8 bytes count as U+FFFD,
// as Go's range over a string reads them.
func Measure(body string) Segmentation {
	if m, ok := measureGSM7(body); ok {
		return m
	}
	return measureUCS2(body)
}

// measureGSM7 measures body in GSM-7, or reports false at the first
// character that has no GSM-7 form. Parts are packed as it goes, and only
// count when the whole does not fit one segment.
func measureGSM7(body string) (Segmentation, bool) {
	m := Segmentation{Encoding: GSM7}
	parts, used := 1, 0
	for _, r := range body {
		w := gsm7Septets(r)
		if w == 0 {
			return Segmentation{}, false
		}
		if used+w > gsm7Part {
			parts++
			used = 0
		}
		used += w
		m.Units += w
		m.Chars++
	}
	m.Segments = 1
	if m.Units > gsm7Single {
		m.Segments = parts
	}
	return m, true
}

// measureUCS2 measures body in UTF-16 code units; a rune outside the Basic
// Multilingual Plane is a surrogate pair, 2 units, kept in one part.
func measureUCS2(body string) Segmentation {
	m := Segmentation{Encoding: UCS2}
	parts, used := 1, 0
	for _, r := range body {
		w := 1
		if r > 0xFFFF {
			w = 2
		}
		if used+w > ucs2Part {
			parts++
			used = 0
		}
		used += w
		m.Units += w
		m.Chars++
	}
	m.Segments = 1
	if m.Units > ucs2Single {
		m.Segments = parts
	}
	return m
}
