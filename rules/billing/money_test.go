package billing

import "testing"

func TestCostString(t *testing.T) {
	for _, tc := range []struct {
		in   Micros
		want string
	}{
		{0, "0.0000"}, {12300, "0.0123"}, {12349, "0.0123"}, {12350, "0.0124"},
		{1_000_000, "1.0000"}, {25_500_000, "25.5000"}, {-12300, "-0.0123"},
	} {
		if got := tc.in.CostString(); got != tc.want {
			t.Errorf("%d.CostString() = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestForDuration(t *testing.T) {
	for _, tc := range []struct {
		sec  float64
		rate Micros
		want Micros
	}{
		{60, 6000, 6000},
		{30, 6000, 3000},
		{1, 6000, 100},
		{0.001, 6000, 1},   // never free
		{61.5, 6000, 6150}, // per second, not per started minute
		{0, 6000, 0},
		{10, 0, 0},
	} {
		if got := ForDuration(tc.sec, tc.rate); got != tc.want {
			t.Errorf("ForDuration(%v, %d) = %d, want %d", tc.sec, tc.rate, got, tc.want)
		}
	}
}

func TestFromUSD(t *testing.T) {
	m, err := FromUSD(25)
	if err != nil || m != 25_000_000 {
		t.Fatalf("FromUSD(25) = %d, %v", m, err)
	}
	if _, err := FromUSD(1e12); err == nil {
		t.Fatal("FromUSD(1e12) accepted an absurd amount")
	}
}
