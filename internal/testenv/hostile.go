package testenv

import (
	"fmt"
	"strings"
)

// AliasBomb is a YAML mapping of levels lists, each holding width aliases of the level below
// ("billion laughs"): a few hundred bytes that expand to width^levels values in any parser
// that resolves aliases. Each line is indented by indent spaces, so that it can sit under a
// key of a manifest.
func AliasBomb(levels, width, indent int) string {
	pad := strings.Repeat(" ", indent)
	var b strings.Builder
	fmt.Fprintf(&b, "%sa0: &a0 [x]\n", pad)
	for l := 1; l <= levels; l++ {
		fmt.Fprintf(&b, "%sa%d: &a%d [", pad, l, l)
		for i := 0; i < width; i++ {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "*a%d", l-1)
		}
		b.WriteString("]\n")
	}
	return b.String()
}
