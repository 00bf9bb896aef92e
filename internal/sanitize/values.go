package sanitize

import (
	"encoding/json"
	"math"
	"reflect"
)

// copyValue returns a deep copy of a JSON-shaped value. Numbers are normalised to the two
// types the dynamic client produces, int64 and float64, so that objects built by other code
// (typed converters, tests, YAML) compare and render the same. Values of other types are
// copied as they are; Document reports them.
func copyValue(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[k] = copyValue(e)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = copyValue(e)
		}
		return out
	case map[string]string:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[k] = e
		}
		return out
	case []string:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = e
		}
		return out
	}
	if n, ok := number(v); ok {
		return n
	}
	return v
}

// number converts any Go number to int64 or float64. A float64 holding a whole number stays a
// float64: equalValues compares across the two.
func number(v any) (any, bool) {
	switch t := v.(type) {
	case int64, float64:
		return t, true
	case int:
		return int64(t), true
	case int8:
		return int64(t), true
	case int16:
		return int64(t), true
	case int32:
		return int64(t), true
	case uint8:
		return int64(t), true
	case uint16:
		return int64(t), true
	case uint32:
		return int64(t), true
	case uint:
		if uint64(t) <= math.MaxInt64 {
			return int64(t), true
		}
		return float64(t), true
	case uint64:
		if t <= math.MaxInt64 {
			return int64(t), true
		}
		return float64(t), true
	case float32:
		return float64(t), true
	case json.Number:
		if i, err := t.Int64(); err == nil {
			return i, true
		}
		if f, err := t.Float64(); err == nil {
			return f, true
		}
	}
	return nil, false
}

// equalValues reports whether two JSON-shaped values mean the same: maps by keys, lists by
// position, numbers by value whatever their Go type (the int64 7 equals the float64 7).
func equalValues(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !equalValues(xv, yv) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equalValues(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	if na, ok := number(a); ok {
		nb, ok := number(b)
		if !ok {
			return false
		}
		return numbersEqual(na, nb)
	}
	if _, ok := number(b); ok {
		return false
	}
	return reflect.DeepEqual(copyValue(a), copyValue(b))
}

func numbersEqual(a, b any) bool {
	ai, aInt := a.(int64)
	bi, bInt := b.(int64)
	switch {
	case aInt && bInt:
		return ai == bi
	case aInt:
		return float64(ai) == b.(float64) && b.(float64) == math.Trunc(b.(float64)) && int64(b.(float64)) == ai
	case bInt:
		return float64(bi) == a.(float64) && a.(float64) == math.Trunc(a.(float64)) && int64(a.(float64)) == bi
	}
	return a.(float64) == b.(float64)
}
