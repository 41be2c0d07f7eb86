package subtitles

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"parley/platform/problem"
	"parley/rules/textcheck"
)

// Style defaults; sizes default to a share of the video's height.
const (
	DefaultFont         = "DejaVu Sans"
	DefaultPrimaryColor = "#FFFFFF"
	DefaultOutlineColor = "#000000"
	DefaultPosition     = "bottom"
	defaultSizeShare    = 0.05
)

// Style is how burned captions look. The zero value means "all defaults";
// Resolve fills the defaults in for a video height.
type Style struct {
	Font         string  `json:"font,omitempty"`
	FontSize     float64 `json:"fontSize,omitempty"` // px at the video's height; 0: 5% of it
	PrimaryColor string  `json:"primaryColor,omitempty"`
	OutlineColor string  `json:"outlineColor,omitempty"`
	Position     string  `json:"position,omitempty"` // bottom | middle | top
	MarginV      float64 `json:"marginV,omitempty"`  // px; see marginVSet

	// marginVSet tells an explicit marginV of 0 from an absent one (5% of
	// the height). MarshalJSON keeps it across a round trip.
	marginVSet bool
}

// StyleError says which style key is wrong and why.
type StyleError struct {
	Key    string
	Reason string
}

func (e *StyleError) Error() string {
	if e.Key == "" {
		return "style: " + e.Reason
	}
	return "style." + e.Key + ": " + e.Reason
}

// Problem is how a client is told: a VALIDATION_ERROR naming the style key
// (the API's style field, the console's style inputs).
func (e *StyleError) Problem() *problem.Error {
	return problem.Invalid(strings.TrimSuffix("style."+e.Key, "."), e.Reason)
}

var colorPattern = regexp.MustCompile(`^#[0-9A-Fa-f]{6}([0-9A-Fa-f]{2})?$`)

// ParseStyle validates a style given as a JSON object. "" (or null) means
// all defaults; unknown keys and bad values give a *StyleError.
func ParseStyle(raw string) (Style, error) {
	var s Style
	raw = strings.TrimSpace(raw)
	if raw == "" || raw == "null" {
		return s, nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal([]byte(raw), &fields); err != nil || fields == nil {
		return Style{}, &StyleError{Reason: "must be a JSON object"}
	}
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := fields[k]
		if bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
			continue
		}
		var err error
		switch k {
		case "font":
			s.Font, err = styleString(k, v)
		case "fontSize":
			s.FontSize, err = styleNumber(k, v)
			if err == nil && (s.FontSize < 8 || s.FontSize > 200) {
				err = &StyleError{Key: k, Reason: "must be between 8 and 200"}
			}
		case "primaryColor":
			s.PrimaryColor, err = styleString(k, v)
		case "outlineColor":
			s.OutlineColor, err = styleString(k, v)
		case "position":
			s.Position, err = styleString(k, v)
		case "marginV":
			s.MarginV, err = styleNumber(k, v)
			s.marginVSet = true
			if err == nil && (s.MarginV < 0 || s.MarginV > 1000) {
				err = &StyleError{Key: k, Reason: "must be between 0 and 1000"}
			}
		default:
			err = &StyleError{Key: k, Reason: "unknown key"}
		}
		if err != nil {
			return Style{}, err
		}
	}
	if err := s.validateStrings(); err != nil {
		return Style{}, err
	}
	return s, nil
}

func styleString(key string, v json.RawMessage) (string, error) {
	// json.Unmarshal would quietly replace bytes that are not UTF-8.
	if !utf8.Valid(v) {
		return "", &StyleError{Key: key, Reason: "must be valid UTF-8"}
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return "", &StyleError{Key: key, Reason: "must be a string"}
	}
	if s == "" {
		return "", &StyleError{Key: key, Reason: "must not be empty"}
	}
	return s, nil
}

func styleNumber(key string, v json.RawMessage) (float64, error) {
	var f float64
	if err := json.Unmarshal(v, &f); err != nil || math.IsNaN(f) {
		return 0, &StyleError{Key: key, Reason: "must be a number"}
	}
	return f, nil
}

func (s Style) validateStrings() error {
	if s.Font != "" {
		if err := textcheck.Line(s.Font); err != nil {
			return &StyleError{Key: "font", Reason: err.Error()}
		}
		if len([]rune(s.Font)) > 64 {
			return &StyleError{Key: "font", Reason: "must be at most 64 characters"}
		}
		for _, r := range s.Font {
			// A comma would end the font field of the ASS style line; U+FFFD
			// is what json.Unmarshal makes of a lone surrogate escape.
			if !unicode.IsPrint(r) || r == ',' || r == utf8.RuneError {
				return &StyleError{Key: "font", Reason: "must be printable characters without commas"}
			}
		}
		if strings.TrimSpace(s.Font) != s.Font {
			return &StyleError{Key: "font", Reason: "must not start or end with spaces"}
		}
	}
	for key, c := range map[string]string{"primaryColor": s.PrimaryColor, "outlineColor": s.OutlineColor} {
		if c != "" && !colorPattern.MatchString(c) {
			return &StyleError{Key: key, Reason: "must be #RRGGBB or #RRGGBBAA"}
		}
	}
	switch s.Position {
	case "", "bottom", "middle", "top":
	default:
		return &StyleError{Key: "position", Reason: "must be bottom, middle or top"}
	}
	return nil
}

// MarshalJSON writes only the keys that were given, so ParseStyle reads the
// same style back (an explicit marginV of 0 included).
func (s Style) MarshalJSON() ([]byte, error) {
	m := map[string]any{}
	if s.Font != "" {
		m["font"] = s.Font
	}
	if s.FontSize != 0 {
		m["fontSize"] = s.FontSize
	}
	if s.PrimaryColor != "" {
		m["primaryColor"] = s.PrimaryColor
	}
	if s.OutlineColor != "" {
		m["outlineColor"] = s.OutlineColor
	}
	if s.Position != "" {
		m["position"] = s.Position
	}
	if s.marginVSet || s.MarginV != 0 {
		m["marginV"] = s.MarginV
	}
	return json.Marshal(m)
}

// UnmarshalJSON validates like ParseStyle.
func (s *Style) UnmarshalJSON(b []byte) error {
	parsed, err := ParseStyle(string(b))
	if err != nil {
		return err
	}
	*s = parsed
	return nil
}

// Resolve returns the style with every default filled in for a video of
// the given height in pixels.
func (s Style) Resolve(height int) Style {
	share := math.Round(float64(height) * defaultSizeShare)
	if s.Font == "" {
		s.Font = DefaultFont
	}
	if s.FontSize == 0 {
		s.FontSize = max(8, share)
	}
	if s.PrimaryColor == "" {
		s.PrimaryColor = DefaultPrimaryColor
	}
	if s.OutlineColor == "" {
		s.OutlineColor = DefaultOutlineColor
	}
	if s.Position == "" {
		s.Position = DefaultPosition
	}
	if !s.marginVSet && s.MarginV == 0 {
		s.MarginV = share
	}
	s.marginVSet = true
	return s
}

// assColor converts #RRGGBB[AA] (AA = opacity, FF opaque) to ASS
// &HAABBGGRR (AA = transparency, 00 opaque).
func assColor(c string) string {
	c = strings.TrimPrefix(strings.ToUpper(c), "#")
	if len(c) != 6 && len(c) != 8 {
		return "&H00FFFFFF"
	}
	alpha := "00"
	if len(c) == 8 {
		var a int
		fmt.Sscanf(c[6:8], "%02X", &a)
		alpha = fmt.Sprintf("%02X", 255-a)
	}
	return "&H" + alpha + c[4:6] + c[2:4] + c[0:2]
}
