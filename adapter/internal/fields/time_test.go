package fields

import (
	"math/rand/v2"
	"strconv"
	"testing"
	"time"
)

// parseTime is what Time does without its fast path.
func parseTime(v []byte) time.Time {
	t, err := time.Parse(time.RFC3339Nano, Str(v))
	if err != nil {
		return time.Time{}
	}
	return t.UTC()
}

func TestTimeMatchesParse(t *testing.T) {
	inputs := []string{
		"2026-11-29T16:20:05Z", "2026-11-29T16:20:05.1Z", "2026-11-29T16:20:05.123456789Z",
		"2026-11-29T16:20:05.1234567891Z", "2026-11-29T16:20:05.Z", "2026-11-29T16:20:05,5Z",
		"2026-11-29T16:20:05+02:00", "2026-11-29T16:20:05.5-07:30", "2026-11-29T16:20:05+24:00",
		"2026-11-29T16:20:05+02:60", "2026-02-29T00:00:00Z", "2024-02-29T00:00:00Z", "2026-13-01T00:00:00Z",
		"2026-00-01T00:00:00Z", "2026-04-31T00:00:00Z", "2026-11-29T24:00:00Z", "2026-11-29T23:60:00Z",
		"2026-11-29T23:59:60Z", "2026-11-29t16:20:05z", "2026-11-29 16:20:05Z", "2026-11-29T16:20:05",
		"0000-01-01T00:00:00Z", "9999-12-31T23:59:59.999999999+23:59", "2026-11-29T16:20:05+0200",
		"+026-11-29T16:20:05Z", "2026-1a-29T16:20:05Z", "2026-11-29T16:20:05Zjunk", "",
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		b := []byte(inputs[r.IntN(len(inputs))])
		if len(b) > 0 {
			b[r.IntN(len(b))] = "0123456789-:.TZ+x"[r.IntN(17)]
		}
		inputs = append(inputs, string(b))
	}
	for _, in := range inputs {
		for _, v := range [][]byte{[]byte(strconv.Quote(in)), []byte(in), []byte(`"` + in)} {
			got, want := Time(v), parseTime(v)
			if !got.Equal(want) || got.Location() != want.Location() {
				t.Errorf("Time(%s) = %v; time.Parse gives %v", v, got, want)
			}
		}
	}
}

// FuzzTime checks that Time's fast path agrees with time.Parse.
func FuzzTime(f *testing.F) {
	f.Add([]byte(`"2026-11-29T16:20:05.123Z"`))
	f.Add([]byte(`"2026-11-29T16:20:05+02:00"`))
	f.Add([]byte(`"2024-02-29T23:59:59.999999999-07:30"`))
	f.Fuzz(func(t *testing.T, v []byte) {
		got, want := Time(v), parseTime(v)
		if !got.Equal(want) || got.Location() != want.Location() {
			t.Fatalf("Time(%q) = %v; time.Parse gives %v", v, got, want)
		}
	})
}

func TestDaysIn(t *testing.T) {
	for year := 1896; year <= 2404; year++ {
		for month := 1; month <= 12; month++ {
			want := time.Date(year, time.Month(month)+1, 0, 0, 0, 0, 0, time.UTC).Day()
			if got := daysIn(year, month); got != want {
				t.Fatalf("daysIn(%d, %d) = %d; want %d", year, month, got, want)
			}
		}
	}
}
