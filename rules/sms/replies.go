package sms

// Replies are the texts an account answers the compliance keywords with:
// OptOut confirms an opt-out (STOP), OptIn an opt-in (START), Help answers
// HELP.
type Replies struct {
	OptOut string `json:"optOut"`
	OptIn  string `json:"optIn"`
	Help   string `json:"help"`
}

// For is the text that answers a keyword of kind k ("" for NoKeyword).
func (r Replies) For(k Keyword) string {
	switch k {
	case OptOut:
		return r.OptOut
	case OptIn:
		return r.OptIn
	case Help:
		return r.Help
	}
	return ""
}

// defaultReplies are the platform's texts by locale, each one segment: the
// English ones within 160 GSM-7 septets, the Hebrew and Arabic ones within
// 70 UCS-2 units (replies_test.go holds them to it).
var defaultReplies = map[string]Replies{
	"en": {
		OptOut: "You are unsubscribed and will get no more messages from this sender. Reply START to resubscribe.",
		OptIn:  "You are subscribed again and will get messages from this sender. Reply STOP to unsubscribe.",
		Help:   "Reply STOP to unsubscribe or START to subscribe again. Message and data rates may apply.",
	},
	"he": {
		OptOut: "הוסרת מרשימת התפוצה ולא יישלחו אליך עוד הודעות. לחידוש השב START",
		OptIn:  "נרשמת מחדש ותקבל שוב הודעות מהשולח. להסרה השב הסר",
		Help:   "להסרה מרשימת התפוצה השב הסר או STOP. לחידוש השב START.",
	},
	"ar": {
		OptOut: "تم إلغاء اشتراكك ولن تصلك رسائل أخرى من هذا المرسل. للعودة أرسل START",
		OptIn:  "تم تجديد اشتراكك وستصلك رسائل هذا المرسل مجددًا. للإلغاء أرسل توقف",
		Help:   "لإلغاء الاشتراك أرسل توقف أو STOP، وللعودة أرسل START.",
	},
}

// DefaultReplies are the platform's texts in a locale (en, he, ar; English
// for any other).
func DefaultReplies(locale string) Replies {
	if r, ok := defaultReplies[locale]; ok {
		return r
	}
	return defaultReplies["en"]
}
