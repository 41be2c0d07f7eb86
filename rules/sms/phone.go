package sms

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/nyaruka/phonenumbers"
)

// ErrInvalidPhone is wrapped by every error of ParsePhone. The text it is
// wrapped in says why without repeating the input, so it is safe to show a
// client.
var ErrInvalidPhone = errors.New("invalid phone number")

// Phone is a number that can be sent to.
type Phone struct {
	// E164 is the number as given, which is already its E.164 form.
	E164 string
	// Country is the ISO 3166 alpha-2 region the number belongs to, as
	// libphonenumber assigns it (e.g. "CA" for +1 613..., "GG" for
	// +44 7911...); it keys prices, enabled countries and quotas.
	Country string
}

// maxE164Digits is the longest number E.164 allows, country code included.
const maxE164Digits = 15

// ParsePhone accepts a number only in E.164 form ("+" and digits, no spaces,
// punctuation, extension or national prefix) that libphonenumber's metadata
// deems valid for a country. Twilio's test numbers +1 500 555 0000 to 0009
// pass: the metadata lists +1 500 as a valid US personal-number range.
func ParsePhone(s string) (Phone, error) {
	if !isE164Shape(s) {
		return Phone{}, fmt.Errorf("%w: must be E.164, a + and up to %d digits", ErrInvalidPhone, maxE164Digits)
	}
	num, ok := splitE164(s)
	if !ok {
		var err error
		if num, err = phonenumbers.Parse(s, ""); err != nil {
			return Phone{}, fmt.Errorf("%w: unknown country code", ErrInvalidPhone)
		}
	}
	// Parse forgives forms that are not E.164 (a national 0 after the country
	// code, for one); only a number that formats back to itself is. The
	// region is looked up once: IsValidNumber would look it up again, and
	// that lookup (every region of +1 tried in turn) is most of the cost of
	// a 10,000-recipient batch's validation.
	region := phonenumbers.GetRegionCodeForNumber(num)
	if !phonenumbers.IsValidNumberForRegion(num, region) || phonenumbers.Format(num, phonenumbers.E164) != s {
		return Phone{}, fmt.Errorf("%w: not a valid number for its country", ErrInvalidPhone)
	}
	if len(region) != 2 {
		// Non-geographic numbers (+800, +882, ...) are region "001": no
		// country to price or enable them by.
		return Phone{}, fmt.Errorf("%w: not a number of any country", ErrInvalidPhone)
	}
	return Phone{E164: s, Country: region}, nil
}

// splitE164 builds the number of an E.164 string without Parse, whose
// general parsing (extensions, punctuation, national prefixes: regular
// expressions all) is half of a large batch's validation and has nothing to
// do for a string of digits: the country code is the one prefix of one to
// three digits that names a country. A national number with a leading zero
// (Italy's) is left to Parse. ParsePhone checks what either builds by
// formatting it back, so this can refuse nothing valid and pass nothing
// invalid.
func splitE164(s string) (*phonenumbers.PhoneNumber, bool) {
	digits := s[1:]
	for n := 1; n <= 3 && n < len(digits); n++ {
		cc, _ := strconv.Atoi(digits[:n])
		if len(phonenumbers.GetRegionCodesForCountryCode(cc)) == 0 {
			continue
		}
		national := digits[n:]
		if national[0] == '0' {
			return nil, false
		}
		nn, err := strconv.ParseUint(national, 10, 64)
		if err != nil {
			return nil, false
		}
		code := int32(cc)
		return &phonenumbers.PhoneNumber{CountryCode: &code, NationalNumber: &nn}, true
	}
	return nil, false
}

func isE164Shape(s string) bool {
	if len(s) < 2 || len(s) > 1+maxE164Digits || s[0] != '+' || s[1] == '0' {
		return false
	}
	for i := 1; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
