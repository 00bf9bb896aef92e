package main

import (
	"fmt"
	"math"
	"slices"
	"time"
)

// median of xs (the mean of the middle two for an even count); NaN when empty.
func median(xs []float64) float64 { return percentile(xs, 50) }

// percentile by linear interpolation between closest ranks; NaN when empty. A value of
// +Inf (censored) makes every percentile that reaches it +Inf.
func percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	rank := p / 100 * float64(len(s)-1)
	lo := int(math.Floor(rank))
	hi := int(math.Ceil(rank))
	if lo == hi || math.IsInf(s[hi], 1) {
		return s[hi] // +Inf stands for "not reached within the cap"
	}
	return s[lo] + (s[hi]-s[lo])*(rank-float64(lo))
}

func seconds(d time.Duration) float64 { return d.Seconds() }

// fmtValue renders a figure with its unit.
func fmtValue(v float64, unit string) string {
	if math.IsNaN(v) {
		return "—"
	}
	switch unit {
	case "s":
		switch {
		case v < 1:
			return fmt.Sprintf("%.0f ms", v*1000)
		case v < 10:
			return fmt.Sprintf("%.2f s", v)
		default:
			return fmt.Sprintf("%.1f s", v)
		}
	case "B":
		return fmt.Sprintf("%.0f MiB", v/(1<<20))
	case "count":
		return fmt.Sprintf("%.0f", v)
	default:
		return fmt.Sprintf("%g %s", v, unit)
	}
}

func fmtRatio(v, base float64) string {
	if math.IsNaN(v) || math.IsNaN(base) || base == 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f×", v/base)
}
