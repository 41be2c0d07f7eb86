package main

import "testing"

func TestRequireLoopback(t *testing.T) {
	tests := map[string]bool{
		"127.0.0.1:8089": true,
		"[::1]:8089":     true,
		"localhost:8089": true,
		":8089":          false,
		"0.0.0.0:8089":   false,
		"10.0.0.5:8089":  false,
		"127.0.0.1":      false,
	}
	for addr, want := range tests {
		if err := requireLoopback("PARLEY_CARRIER_ADDR", addr); (err == nil) != want {
			t.Errorf("requireLoopback(%q) = %v, want allowed=%v", addr, err, want)
		}
	}
}
