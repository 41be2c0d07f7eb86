package api

import (
	"testing"

	"parley/platform/problem"
)

// Every code of the vocabulary answers with a status chosen for it, never
// the 500 an unmapped code falls back to by accident.
func TestEveryProblemCodeHasAStatus(t *testing.T) {
	for _, code := range problem.Codes() {
		if _, ok := httpStatus[code]; !ok {
			t.Errorf("%s has no HTTP status", code)
		}
	}
	for code := range httpStatus {
		if !problem.Known(code) {
			t.Errorf("httpStatus maps %s, which is not a problem code", code)
		}
	}
}
