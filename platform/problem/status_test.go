package problem

import "testing"

// Every code of the vocabulary answers with a status chosen for it, never
// the 500 an unmapped code falls back to by accident.
func TestEveryCodeHasAStatus(t *testing.T) {
	for _, code := range Codes() {
		if _, ok := statuses[code]; !ok {
			t.Errorf("%s has no HTTP status", code)
		}
	}
	for code := range statuses {
		if !Known(code) {
			t.Errorf("statuses maps %s, which is not a problem code", code)
		}
	}
}
