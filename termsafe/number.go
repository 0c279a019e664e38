package termsafe

import (
	"math"
	"strconv"
	"strings"
)

// maxPlain is the largest magnitude Fixed writes digit by digit: beyond
// it a float64 no longer holds every integer (2^53), and a server's 1e308
// would print as 309 digits.
const maxPlain = 1 << 53

// Fixed formats v with the given number of decimals, as %.*f does, while
// |v| is at most 2^53. A larger or non-finite value — which only a broken
// or hostile peer sends — is written in six significant digits with an
// exponent ("1e+308", "-1.5e+300", "+Inf", "NaN"), so a number never takes
// more than a couple of dozen columns.
func Fixed(v float64, decimals int) string {
	if math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(v) > maxPlain {
		return strconv.FormatFloat(v, 'g', 6, 64)
	}
	return strconv.FormatFloat(v, 'f', decimals, 64)
}

// Number formats a progress value, a total or any count a peer sent: at
// most three decimals with trailing zeros dropped ("3", "2.5", "0.125"),
// bounded as Fixed is; a value too small for three decimals is written
// with an exponent ("1e-300"), not as a misleading 0.
func Number(v float64) string {
	if v != 0 && math.Abs(v) < 0.0005 {
		return strconv.FormatFloat(v, 'g', 6, 64)
	}
	s := Fixed(v, 3)
	if strings.ContainsAny(s, "eIN") {
		return s
	}
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	if s == "-0" {
		s = "0"
	}
	return s
}

// Millis formats a time given in milliseconds (a trace's "ms") as a person
// reads it: "12.5ms" below a second, "3.20s" above. A time no run can have
// taken (negative, beyond 2^53 ms, non-finite) is written bounded with
// "(out of range)" after it.
func Millis(ms float64) string {
	switch {
	case math.IsNaN(ms) || math.IsInf(ms, 0) || ms < 0 || ms > maxPlain:
		return strconv.FormatFloat(ms, 'g', 6, 64) + "ms (out of range)"
	case ms < 1000:
		return strconv.FormatFloat(ms, 'f', 1, 64) + "ms"
	}
	return strconv.FormatFloat(ms/1000, 'f', 2, 64) + "s"
}

// Percent is value/total as a whole percentage for a progress bar's label,
// clamped to 0–100%: a server's total of 1e-300 or a value past its total
// reads "100%", never "+Inf%" or hundreds of digits. ok is false when the
// total gives no fraction (zero, negative, non-finite) or the value is not
// finite.
func Percent(value, total float64) (pct string, fraction float64, ok bool) {
	if !(total > 0) || math.IsInf(total, 0) || math.IsNaN(value) || math.IsInf(value, 0) {
		return "", 0, false
	}
	f := value / total
	switch {
	case math.IsNaN(f) || f < 0:
		f = 0
	case f > 1:
		f = 1
	}
	return strconv.Itoa(int(math.Round(f*100))) + "%", f, true
}
