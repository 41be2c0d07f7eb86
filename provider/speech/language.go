package speech

import (
	"errors"
	"regexp"
	"strings"
)

// NormalizeLanguage maps what engines report as a language — an English name
// ("english", Whisper's verbose_json), an ISO 639-2/639-3 code ("eng",
// ElevenLabs), a BCP 47 tag ("en-US") or an ISO 639-1 code — to the ISO 639-1
// code where one exists. Unknown values come back lowercased and trimmed.
func NormalizeLanguage(s string) string {
	l := strings.ToLower(strings.TrimSpace(s))
	if i := strings.IndexAny(l, "-_"); i > 0 && isLangCode(l[:i]) {
		l = l[:i]
	}
	if c, ok := legacy639_1[l]; ok {
		return c
	}
	if len(l) == 2 {
		return l
	}
	if c, ok := languageNames[l]; ok {
		return c
	}
	if c, ok := iso639_3[l]; ok {
		return c
	}
	return l
}

// legacy639_1 fixes withdrawn ISO 639-1 codes and Whisper's "jw" for Javanese.
var legacy639_1 = map[string]string{"iw": "he", "in": "id", "ji": "yi", "jw": "jv", "mo": "ro"}

// languageNames covers the names Whisper reports in verbose_json, plus common
// aliases.
var languageNames = map[string]string{
	"afrikaans": "af", "albanian": "sq", "amharic": "am", "arabic": "ar", "armenian": "hy",
	"assamese": "as", "azerbaijani": "az", "bashkir": "ba", "basque": "eu", "belarusian": "be",
	"bengali": "bn", "bosnian": "bs", "breton": "br", "bulgarian": "bg", "burmese": "my",
	"catalan": "ca", "chinese": "zh", "mandarin": "zh", "croatian": "hr", "czech": "cs",
	"danish": "da", "dutch": "nl", "flemish": "nl", "english": "en", "estonian": "et",
	"faroese": "fo", "finnish": "fi", "french": "fr", "galician": "gl", "georgian": "ka",
	"german": "de", "greek": "el", "gujarati": "gu", "haitian creole": "ht", "haitian": "ht",
	"hausa": "ha", "hawaiian": "haw", "hebrew": "he", "hindi": "hi", "hungarian": "hu",
	"icelandic": "is", "indonesian": "id", "italian": "it", "japanese": "ja", "javanese": "jv",
	"kannada": "kn", "kazakh": "kk", "khmer": "km", "korean": "ko", "lao": "lo",
	"latin": "la", "latvian": "lv", "lingala": "ln", "lithuanian": "lt", "luxembourgish": "lb",
	"letzeburgesch": "lb", "macedonian": "mk", "malagasy": "mg", "malay": "ms", "malayalam": "ml",
	"maltese": "mt", "maori": "mi", "marathi": "mr", "mongolian": "mn", "myanmar": "my",
	"nepali": "ne", "norwegian": "no", "nynorsk": "nn", "occitan": "oc", "pashto": "ps",
	"pushto": "ps", "persian": "fa", "farsi": "fa", "polish": "pl", "portuguese": "pt",
	"punjabi": "pa", "panjabi": "pa", "romanian": "ro", "moldavian": "ro", "moldovan": "ro",
	"russian": "ru", "sanskrit": "sa", "serbian": "sr", "shona": "sn", "sindhi": "sd",
	"sinhala": "si", "sinhalese": "si", "slovak": "sk", "slovenian": "sl", "somali": "so",
	"spanish": "es", "castilian": "es", "sundanese": "su", "swahili": "sw", "swedish": "sv",
	"tagalog": "tl", "filipino": "tl", "tajik": "tg", "tamil": "ta", "tatar": "tt",
	"telugu": "te", "thai": "th", "tibetan": "bo", "turkish": "tr", "turkmen": "tk",
	"ukrainian": "uk", "urdu": "ur", "uzbek": "uz", "valencian": "ca", "vietnamese": "vi",
	"welsh": "cy", "yiddish": "yi", "yoruba": "yo", "cantonese": "yue", "irish": "ga",
	"zulu": "zu", "xhosa": "xh", "igbo": "ig", "kinyarwanda": "rw", "kyrgyz": "ky",
}

// iso639_3 maps ISO 639-3 (and 639-2/B) codes, as ElevenLabs reports them, to
// ISO 639-1.
var iso639_3 = map[string]string{
	"afr": "af", "sqi": "sq", "alb": "sq", "amh": "am", "ara": "ar", "arb": "ar", "hye": "hy",
	"arm": "hy", "asm": "as", "aze": "az", "bak": "ba", "eus": "eu", "baq": "eu", "bel": "be",
	"ben": "bn", "bos": "bs", "bre": "br", "bul": "bg", "mya": "my", "bur": "my", "cat": "ca",
	"zho": "zh", "chi": "zh", "cmn": "zh", "hrv": "hr", "ces": "cs", "cze": "cs", "dan": "da",
	"nld": "nl", "dut": "nl", "eng": "en", "est": "et", "ekk": "et", "fao": "fo", "fin": "fi",
	"fra": "fr", "fre": "fr", "glg": "gl", "kat": "ka", "geo": "ka", "deu": "de", "ger": "de",
	"ell": "el", "gre": "el", "guj": "gu", "hat": "ht", "hau": "ha", "heb": "he", "hin": "hi",
	"hun": "hu", "isl": "is", "ice": "is", "ind": "id", "ita": "it", "jpn": "ja", "jav": "jv",
	"kan": "kn", "kaz": "kk", "khm": "km", "kor": "ko", "lao": "lo", "lat": "la", "lav": "lv",
	"lvs": "lv", "lin": "ln", "lit": "lt", "ltz": "lb", "mkd": "mk", "mac": "mk", "mlg": "mg",
	"msa": "ms", "may": "ms", "zsm": "ms", "mal": "ml", "mlt": "mt", "mri": "mi", "mao": "mi",
	"mar": "mr", "mon": "mn", "khk": "mn", "nep": "ne", "npi": "ne", "nor": "no", "nob": "nb",
	"nno": "nn", "oci": "oc", "pus": "ps", "pbt": "ps", "fas": "fa", "per": "fa", "pes": "fa",
	"pol": "pl", "por": "pt", "pan": "pa", "ron": "ro", "rum": "ro", "rus": "ru", "san": "sa",
	"srp": "sr", "sna": "sn", "snd": "sd", "sin": "si", "slk": "sk", "slo": "sk", "slv": "sl",
	"som": "so", "spa": "es", "sun": "su", "swa": "sw", "swh": "sw", "swe": "sv", "tgl": "tl",
	"fil": "tl", "tgk": "tg", "tam": "ta", "tat": "tt", "tel": "te", "tha": "th", "bod": "bo",
	"tib": "bo", "tur": "tr", "tuk": "tk", "ukr": "uk", "urd": "ur", "uzb": "uz", "uzn": "uz",
	"vie": "vi", "cym": "cy", "wel": "cy", "yid": "yi", "yor": "yo", "gle": "ga", "zul": "zu",
	"xho": "xh", "ibo": "ig", "kin": "rw", "kir": "ky", "lug": "lg", "nya": "ny", "orm": "om",
	"ori": "or", "ory": "or", "tir": "ti", "wol": "wo", "ful": "ff", "kur": "ku", "gla": "gd",
}

var languagePattern = regexp.MustCompile(`^[a-z]{2,3}(-[A-Za-z]{2,4})?$`)

// ErrBadLanguage is a requested language that is neither auto nor an ISO
// 639 code.
var ErrBadLanguage = errors.New("must be auto or an ISO 639-1 code such as en")

// ParseLanguage reads what a client asks for: "" or "auto" is auto;
// otherwise an ISO 639 code, optionally with a region ("en-US"), of which the
// language part is kept.
func ParseLanguage(v string) (string, error) {
	v = strings.TrimSpace(v)
	if v == "" || v == "auto" {
		return "auto", nil
	}
	if !languagePattern.MatchString(v) {
		return "", ErrBadLanguage
	}
	return strings.ToLower(v[:strings.IndexByte(v+"-", '-')]), nil
}
