package transcript

// Paragraph is one paragraph of the txt export, without its label in the
// text: Label is "Speaker N" in a diarized transcript, else empty.
type Paragraph struct {
	Label string
	Text  string
}

// Paragraphs splits a transcript as PlainText does (speaker turns, or
// pauses and long runs); a transcript without word timings is one
// paragraph of its Text, and an empty one has none.
func Paragraphs(t Transcript) []Paragraph {
	if len(t.Words) == 0 {
		if t.Text == "" {
			return nil
		}
		return []Paragraph{{Text: t.Text}}
	}
	var out []Paragraph
	for _, p := range paragraphs(t.Words) {
		if text := JoinWords(p.words); text != "" {
			out = append(out, Paragraph{Label: p.label, Text: text})
		}
	}
	return out
}
