package layout

import "strings"

// maxDiffCells bounds the work of one line diff (rows times columns of the
// table); larger inputs are not patched and get a plain re-render.
const maxDiffCells = 4 << 20

// hunk replaces from[i1:i2] with to[j1:j2].
type hunk struct{ i1, i2, j1, j2 int }

// patchLines carries the change from -> to over to target, a differently
// formatted text of the same document as from. Lines of target that from
// matches and that the change does not touch keep their exact text. ok is false
// when the texts are too large to compare.
func patchLines(target, from, to []string) (string, bool) {
	inTarget, ok := matchLines(from, target)
	if !ok {
		return "", false
	}
	inTo, ok := matchLines(from, to)
	if !ok {
		return "", false
	}
	var b strings.Builder
	next := 0 // next line of target to copy
	for _, h := range widen(hunksOf(inTo, len(to)), inTarget) {
		first, last, ok := targetRange(h, inTarget, len(target))
		if !ok || first < next || last < first {
			return "", false
		}
		b.WriteString(strings.Join(target[next:first], ""))
		b.WriteString(strings.Join(to[h.j1:h.j2], ""))
		next = last
	}
	b.WriteString(strings.Join(target[next:], ""))
	return b.String(), true
}

// targetRange is the range of target lines that hunk h replaces. Its ends are
// the target lines of the hunk's first and last lines when they have one,
// otherwise the neighbours of the hunk. An insertion goes right after the
// target line of the line before it.
func targetRange(h hunk, inTarget []int, lenTarget int) (first, last int, ok bool) {
	switch {
	case h.i1 < h.i2 && inTarget[h.i1] >= 0:
		first = inTarget[h.i1]
	case h.i1 == 0:
		first = 0
	case inTarget[h.i1-1] >= 0:
		first = inTarget[h.i1-1] + 1
	default:
		return 0, 0, false
	}
	switch {
	case h.i1 == h.i2:
		last = first
	case inTarget[h.i2-1] >= 0:
		last = inTarget[h.i2-1] + 1
	case h.i2 == len(inTarget):
		last = lenTarget
	case inTarget[h.i2] >= 0:
		last = inTarget[h.i2]
	default:
		return 0, 0, false
	}
	return first, last, true
}

// hunksOf lists the changes between a and b given, for every line of a, the
// line of b it matches (-1 for none). Matches must increase.
func hunksOf(match []int, lenB int) []hunk {
	var hs []hunk
	i, j := 0, 0
	for i < len(match) || j < lenB {
		if i < len(match) && match[i] == j {
			i++
			j++
			continue
		}
		h := hunk{i1: i, j1: j}
		for i < len(match) && match[i] < 0 {
			i++
		}
		end := lenB
		if i < len(match) {
			end = match[i]
		}
		j = end
		h.i2, h.j2 = i, j
		hs = append(hs, h)
	}
	return hs
}

// widen grows hunks whose ends cannot be located in target: a hunk whose
// first line (or, for an insertion, the line before it) has no match in target
// takes in the unmatched lines before it; a hunk whose last line has no match
// takes in the unmatched lines after it. Hunks that come to touch are merged.
// Between hunks, from and to lines correspond one to one, so both sides grow
// by the same amount.
func widen(hs []hunk, inTarget []int) []hunk {
	var out []hunk
	for k, h := range hs {
		prevEnd := 0
		if len(out) > 0 {
			prevEnd = out[len(out)-1].i2
		}
		if (h.i1 < h.i2 && inTarget[h.i1] < 0) || (h.i1 == h.i2 && h.i1 > 0 && inTarget[h.i1-1] < 0) {
			for h.i1 > prevEnd && inTarget[h.i1-1] < 0 {
				h.i1--
				h.j1--
			}
		}
		limit := len(inTarget)
		if k+1 < len(hs) {
			limit = hs[k+1].i1
		}
		if h.i1 < h.i2 && inTarget[h.i2-1] < 0 {
			for h.i2 < limit && inTarget[h.i2] < 0 {
				h.i2++
				h.j2++
			}
		}
		if n := len(out); n > 0 && out[n-1].i2 >= h.i1 {
			out[n-1].i2, out[n-1].j2 = h.i2, h.j2
			continue
		}
		out = append(out, h)
	}
	return out
}

// matchLines pairs lines of a with equal lines of b along a longest common
// subsequence. It returns, for each line of a, the index of its partner in b
// or -1. ok is false when the inputs are too large.
func matchLines(a, b []string) ([]int, bool) {
	match := make([]int, len(a))
	for i := range match {
		match[i] = -1
	}
	// Common prefix and suffix need no table.
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		match[pre] = pre
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		match[len(a)-1-suf] = len(b) - 1 - suf
		suf++
	}
	ma, mb := a[pre:len(a)-suf], b[pre:len(b)-suf]
	n, m := len(ma), len(mb)
	if n == 0 || m == 0 {
		return match, true
	}
	if (n+1)*(m+1) > maxDiffCells {
		return nil, false
	}
	// lcs[i*(m+1)+j] is the length of the longest common subsequence of ma[i:] and mb[j:].
	w := m + 1
	lcs := make([]int32, (n+1)*w)
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			switch {
			case ma[i] == mb[j]:
				lcs[i*w+j] = lcs[(i+1)*w+j+1] + 1
			case lcs[(i+1)*w+j] >= lcs[i*w+j+1]:
				lcs[i*w+j] = lcs[(i+1)*w+j]
			default:
				lcs[i*w+j] = lcs[i*w+j+1]
			}
		}
	}
	for i, j := 0, 0; i < n && j < m; {
		switch {
		case ma[i] == mb[j]:
			match[pre+i] = pre + j
			i++
			j++
		case lcs[(i+1)*w+j] >= lcs[i*w+j+1]:
			i++
		default:
			j++
		}
	}
	return match, true
}
